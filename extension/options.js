// options.js - the relay's port, and the pairing (the secret itself is set
// only by the pairing page and never shown).
const $ = (id) => document.getElementById(id);

async function load() {
  const { port, secret } = await chrome.storage.local.get(['port', 'secret']);
  $('port').value = Number.isInteger(port) ? port : 47653;
  $('paired').textContent = secret ? 'Paired.' : 'Not paired: run `tabvisor pair` and type its code on the pairing page (pair.html).';
  $('paired').dataset.state = secret ? 'paired' : 'unpaired';
}

$('save').onclick = async () => {
  const port = Number($('port').value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    $('msg').textContent = 'A port is 1..65535.';
    return;
  }
  await chrome.storage.local.set({ port });
  $('msg').textContent = 'Saved.';
};

$('forget').onclick = async () => {
  await chrome.storage.local.remove('secret');
  $('msg').textContent = 'Pairing forgotten.';
  load();
};

load();
