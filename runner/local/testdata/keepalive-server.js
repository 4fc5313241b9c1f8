// A token endpoint on Node's own http server, for the keep-alive tests of
// tokex's HTTP/1.1 client (runner/local/keepalive_test.go): it answers
// every POST like an RFC 8693 server, after delay ms, and closes idle
// connections after keepAliveTimeout ms, as Node does (default 5000; it
// says so in Keep-Alive: timeout=N). It prints "port N" once listening,
// and "requests N" (the POSTs it answered) at SIGTERM.
//
//   node keepalive-server.js <keepAliveTimeout ms> [delay ms]
'use strict';
const http = require('http');

const keepAlive = Number(process.argv[2] || 5000);
const delay = Number(process.argv[3] || 0);
const body = JSON.stringify({
  access_token: 'node-token',
  issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  token_type: 'Bearer',
  expires_in: 60,
});
let requests = 0;

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    requests++;
    const answer = () => {
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Cache-Control', 'no-store');
      res.end(body);
    };
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  });
});
server.keepAliveTimeout = keepAlive;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`port ${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  process.stdout.write(`requests ${requests}\n`);
  process.exit(0);
});
