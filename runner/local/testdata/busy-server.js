// A single-threaded token endpoint like node oidc-provider under overload
// (issue 23): every POST burns COST_MS of CPU synchronously on the one
// event-loop thread, then answers like an RFC 8693 success. Requests a
// client abandoned (timed out, connection closed) are still in the socket
// buffers and get served in turn: after an overload the server stays busy
// with them long after the load stopped. Prints "listening PORT PID".
'use strict';
const http = require('http');
const cost = Number(process.env.COST_MS || '20');
const body = JSON.stringify({
  access_token: 'busy', issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
  token_type: 'N_A', expires_in: 60,
});
let served = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ served, cpu: process.cpuUsage() }));
    return;
  }
  req.resume();
  req.on('end', () => {
    const until = process.hrtime.bigint() + BigInt(Math.round(cost * 1e6));
    while (process.hrtime.bigint() < until) { /* the handler's CPU */ }
    served++;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-store');
    res.end(body);
  });
});
server.keepAliveTimeout = 5000; // node's default, as oidc-provider runs it
server.listen(Number(process.env.PORT || '0'), '127.0.0.1', () => {
  console.log(`listening ${server.address().port} ${process.pid}`);
});
process.on('SIGTERM', () => process.exit(0));
