#!/usr/bin/env node
// A small MCP server over stdio whose behaviour is chosen by its first argument. It stands in
// for broken servers (and for a paginating one) in test_mcp; the good servers are the real
// @modelcontextprotocol packages.
//   exit      exits with status 3 at start, after a line on stderr
//   garbage   prints lines that are not JSON on stdout and never answers
//   invalid   answers initialize and tools/list, then answers tools/call with invalid JSON-RPC
//   hang      reads its input and never answers anything
//   big       answers tools/call with a 50 MB text result
//   schema    lists a tool whose inputSchema is broken (a string) beside a good one
//   pages     lists 7 tools in 3 pages (nextCursor)
//   die       answers normally, but exits in the middle of the first tools/call
'use strict';
const mode = process.argv[2] || 'pages';
const readline = require('readline');

function send(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }
function tool(name, schema) {
  return { name, description: 'test tool ' + name,
           inputSchema: schema || { type: 'object', properties: { text: { type: 'string', description: 'the text' } } } };
}

if (mode === 'exit') {
  process.stderr.write('scripted_server: cannot start, configuration missing\n');
  process.exit(3);
}
if (mode === 'garbage') {
  process.stdout.write('Welcome to the server!\nthis is not JSON\n');
  setInterval(() => {}, 1000);
}

let called = false;
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch (e) { return; }
  if (mode === 'hang' || mode === 'garbage' || msg.id === undefined)
    return;
  const reply = (result) => send({ jsonrpc: '2.0', id: msg.id, result });
  if (msg.method === 'initialize')
    return reply({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
                   serverInfo: { name: 'scripted-' + mode, version: '1' } });
  if (msg.method === 'tools/list') {
    if (mode === 'schema')
      return reply({ tools: [ tool('good'), { name: 'broken', description: 'x', inputSchema: 'not a schema' } ] });
    if (mode === 'pages') {
      const page = msg.params && msg.params.cursor ? Number(msg.params.cursor) : 0;
      const names = [ ['a1', 'a2', 'a3'], ['b1', 'b2'], ['c1', 'c2'] ][page];
      const result = { tools: names.map((n) => tool(n)) };
      if (page < 2)
        result.nextCursor = String(page + 1);
      return reply(result);
    }
    return reply({ tools: [ tool('echo') ] });
  }
  if (msg.method === 'tools/call') {
    if (mode === 'invalid')
      return send({ jsonrpc: '1.0', id: msg.id, answer: 'whatever' });
    if (mode === 'big') {
      const text = 'x'.repeat(50 * 1024 * 1024);
      return send({ jsonrpc: '2.0', id: msg.id, result: { content: [ { type: 'text', text } ] } });
    }
    if (mode === 'die' && !called) {
      called = true;
      process.stderr.write('scripted_server: crashing on purpose\n');
      process.exit(7);
    }
    return reply({ content: [ { type: 'text', text: 'called ' + msg.params.name + ' with ' +
                                JSON.stringify(msg.params.arguments) } ] });
  }
  send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'unknown method' } });
});
