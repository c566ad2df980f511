# Turn a text file into a C header holding it as a NUL-terminated char array.
# Usage: cmake -DIN=file.js -DOUT=file.h -DNAME=symbol -P embed.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE ${OUT} "/* generated from ${IN}; do not edit */\nstatic const char ${NAME}[] = {\n${body}0x00};\n")
