# A remote browser for tabvisor's --browser-mode cdp: Debian 12's Chromium headless shell
# with its DevTools endpoint on port 9222 of the container, run as a fixed non-root user
# with its sandbox on. Built with no registry by deploy/container-test.sh:
#
#   docker build -f deploy/container/chrome.Dockerfile -t tabvisor-chrome deploy/container
#
# The DevTools port is full control of this browser (any page, any file it can read, its
# cookies) and has no authentication: publish it to tabvisor only (the same pod, or a
# private network), never to a public address. docs/deploy.md, "Remote browsers".
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      chromium-headless-shell ca-certificates fonts-dejavu-core \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10002 chrome \
 && useradd --system --uid 10002 --gid 10002 --home-dir /home/chrome --create-home \
      --shell /usr/sbin/nologin chrome
USER 10002:10002
WORKDIR /home/chrome
EXPOSE 9222
# 0.0.0.0: the container's own network namespace; who can reach it is the network's choice
# (see above). Chromium accepts DevTools HTTP requests only with an IP address or
# "localhost" in Host, so clients name it by address (tabvisor's --cdp-endpoint
# http://127.0.0.1:9222 in the same pod).
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9222 && printf 'GET /json/version HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3 && grep -q webSocketDebuggerUrl <&3"]
ENTRYPOINT ["/usr/lib/chromium/chromium-headless-shell", \
  "--remote-debugging-address=0.0.0.0", "--remote-debugging-port=9222", \
  "--user-data-dir=/tmp/chrome-profile", "--no-first-run", "--disable-gpu", \
  "--disable-dev-shm-usage"]
CMD ["about:blank"]
