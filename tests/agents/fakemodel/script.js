'use strict';
// The scripted turns. A request that offers tools is a conversational turn and
// takes the next scripted answer; one that offers none (a title, a quota probe,
// a classifier) gets the script's "auxiliary" answer and takes no turn.
//
// Script file (JSON):
//   { "turns": [ { "tool": "Edit", "args": { ... } },          one tool call
//                { "calls": [ { "tool": "a", "args": {} }, ... ] },   several
//                { "text": "all done" } ],                     final text
//     "auxiliary": { "text": "ok" },      optional, for tool-less requests
//     "after": { "text": "done" },        optional, once the turns run out
//     "models": [ "fake-model" ] }        optional, ids that GET /v1/models lists
// "args" is an object, or a string for a freeform tool (Codex's apply_patch).
// ${NAME} in any string is replaced by the server's environment variable NAME.
// A turn may also carry "text" next to "tool"/"calls" (said before the calls).
const fs = require('node:fs');

function substitute(v) {
  if (typeof v === 'string') {
    return v.replace(/\$\{([A-Z_][A-Z0-9_]*)\}/g, (m, name) => process.env[name] ?? m);
  }
  if (Array.isArray(v)) return v.map(substitute);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x)]));
  }
  return v;
}

// { text: string|null, calls: [{ name, args }] }
function normalize(turn) {
  const calls = [];
  if (turn.tool) calls.push({ name: turn.tool, args: turn.args ?? {} });
  for (const c of turn.calls ?? []) calls.push({ name: c.tool, args: c.args ?? {} });
  return { text: turn.text ?? (calls.length ? null : ''), calls };
}

class Script {
  constructor(obj = {}) {
    const s = substitute(obj);
    this.turns = (s.turns ?? []).map(normalize);
    this.auxiliary = normalize(s.auxiliary ?? { text: 'ok' });
    this.after = normalize(s.after ?? { text: 'done' });
    this.models = s.models ?? ['fake-model'];
    this.next = 0;
  }

  static load(file) {
    return new Script(file ? JSON.parse(fs.readFileSync(file, 'utf8')) : {});
  }

  // -> { turn: index or null, answer }
  take(conversational) {
    if (!conversational) return { turn: null, answer: this.auxiliary };
    if (this.next < this.turns.length) {
      const turn = this.next++;
      return { turn, answer: this.turns[turn] };
    }
    return { turn: null, answer: this.after };
  }

  state() {
    return { turnsUsed: this.next, turnsTotal: this.turns.length };
  }
}

module.exports = { Script };
