// SPDX-License-Identifier: Apache-2.0
// tiltd web: the page's connection to `tiltd web` and the game state both pages share.
// Plain JavaScript, no build step. Served from the binary (Sources/TiltWeb/Assets).
'use strict';

// Every browser-visible update is timed here (ms since the epoch, sub-ms precision) so the
// integration test and bench/web/run can measure daemon line → screen latency: `seq` is the
// daemon's line number, `painted` the first animation frame after the DOM changed, and
// `detail()` what the screen showed then.
window.tiltdTrace = [];
function traceUpdate(line, what, detail) {
  const received = performance.timeOrigin + performance.now();
  requestAnimationFrame(() => {
    const painted = performance.timeOrigin + performance.now();
    window.tiltdTrace.push(Object.assign({ seq: line.seq, t_ns: line.t_ns, cls: line.class, kind: line.kind || null, what, received, painted }, detail ? detail() : {}));
    if (window.tiltdTrace.length > 20000) window.tiltdTrace.splice(0, 10000);
  });
}

// The game as the daemon describes it: the full state from `hello` and `status` replies, then
// each `game` event on top. A status reply can arrive after events newer than it (it comes
// through a request), so recent events are kept and re-applied on top of a snapshot by `seq`.
class GameModel {
  constructor() { this.state = null; this.recent = []; this.summary = null; this.listeners = []; }
  onChange(f) { this.listeners.push(f); }
  emit(cause) { for (const f of this.listeners) f(this.state, cause); }

  snapshot(game, seq, fresh) {
    if (!game) return;
    if (fresh) this.recent = [];
    const s = Object.assign({}, game);
    s.correct = (game.correct || []).slice();
    s.skipped = (game.skipped || []).slice();
    s.remainingAt = performance.now();
    this.state = s;
    for (const e of this.recent) if (e.seq > seq) this.apply(e, false);
    this.emit({ kind: 'snapshot' });
  }

  event(e) {
    this.recent.push(e);
    if (this.recent.length > 200) this.recent.shift();
    if (!this.state) return;
    this.apply(e, true);
  }

  apply(e, notify) {
    const s = this.state;
    s.state = e.state; s.round = e.round; s.score = e.score;
    s.remaining_ms = e.remaining_ms; s.remainingAt = performance.now();
    if (e.kind === 'round_started') {
      s.deck = e.deck; s.deck_size = e.deck_size; s.round_s = e.round_s;
      s.correct = []; s.skipped = []; s.prompt = null;
    } else if (e.kind === 'prompt') {
      s.prompt = e.prompt;
    } else if (e.kind === 'correct' || e.kind === 'skip') {
      (e.kind === 'correct' ? s.correct : s.skipped).push({ prompt: e.prompt, decision: e.kind, decision_ms: e.decision_ms });
      s.prompt = null;
    } else if (e.kind === 'round_ended' || e.kind === 'stopped') {
      s.prompt = null; s.last_round = e.result;
    } else if (e.kind === 'reset') {
      s.prompt = null; s.last_round = null; s.correct = []; s.skipped = [];
    } else if (e.kind === 'neutral') {
      s.prompt = null;
    }
    if (e.tilt_deg !== undefined) s.tilt_deg = e.tilt_deg;
    if (notify) this.emit(e);
  }

  // Milliseconds left now, counting down between events (the daemon's clock is sample time,
  // which runs at wall speed while the IMU streams).
  remainingNow() {
    const s = this.state;
    if (!s || s.remaining_ms === null || s.remaining_ms === undefined) return null;
    if (s.state === 'idle') return s.remaining_ms;
    return Math.max(0, s.remaining_ms - (performance.now() - s.remainingAt));
  }
}

// The WebSocket to `tiltd web`, reconnecting with backoff. `handlers[cls](line)` get every line.
class TiltSocket {
  constructor({ attitude, handlers, onConnection }) {
    this.attitude = attitude; this.handlers = handlers; this.onConnection = onConnection || (() => {});
    this.nextId = 1; this.pending = new Map(); this.retry = 500; this.ws = null;
    this.browserUp = false; this.daemon = 'connecting'; this.paired = false;
    this.connect();
  }

  connect() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}/ws?attitude=${this.attitude ? 1 : 0}`);
    this.ws = ws;
    ws.onopen = () => { this.browserUp = true; this.retry = 500; this.report(); };
    ws.onmessage = (m) => this.receive(m.data);
    ws.onclose = () => {
      this.browserUp = false; this.ws = null;
      for (const [, p] of this.pending) p.reject(new Error('connection lost'));
      this.pending.clear();
      this.report();
      setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 5000);
    };
  }

  receive(text) {
    let line;
    try { line = JSON.parse(text); } catch (e) { return; }
    if (line.class === 'web' && line.event === 'link') { this.daemon = line.state; this.daemonMessage = line.message; this.report(); }
    if (line.class === 'web' && line.event === 'session') { this.paired = line.paired; this.report(); }
    if (line.class === 'reply' && typeof line.id === 'string' && line.id.startsWith('page-')) {
      const p = this.pending.get(line.id);
      if (p) { this.pending.delete(line.id); p.resolve(line); }
      if (line.cmd !== 'status') return;
    }
    const h = this.handlers[line.class];
    if (h) h(line);
  }

  // 'up' when both the browser's and the daemon's links are up, else a reason to show.
  connection() {
    if (!this.browserUp) return { up: false, text: 'reconnecting to tiltd web…' };
    if (this.daemon !== 'connected') return { up: false, text: this.daemon === 'connecting' ? 'connecting to the daemon…' : 'reconnecting to the daemon…' };
    return { up: true, text: 'connected' };
  }
  report() { this.onConnection(this.connection(), this); }

  // Sends a command; resolves with the daemon's (or tiltd web's) reply line.
  send(cmd, fields) {
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) { reject(new Error('not connected')); return; }
      const id = `page-${this.nextId++}`;
      this.pending.set(id, { resolve, reject });
      setTimeout(() => { if (this.pending.delete(id)) reject(new Error('no reply within 8 s')); }, 8000);
      this.ws.send(JSON.stringify(Object.assign({ cmd, id }, fields || {})));
    });
  }

  // Pairs this browser (the cookie is HttpOnly: the page never sees it), then reconnects so the
  // WebSocket carries it.
  async pair(code) {
    const r = await fetch('/pair', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }) });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || `pairing failed (${r.status})`);
    if (this.ws) this.ws.close();
    return body;
  }
}

// Connection banner shared by both pages.
function showConnection(c) {
  const b = document.getElementById('banner');
  if (!b) return;
  b.textContent = c.text;
  b.className = c.up ? 'banner up' : 'banner down';
  document.body.classList.toggle('offline', !c.up);
}

function fmtClock(ms) {
  if (ms === null || ms === undefined) return '–:––';
  const s = Math.ceil(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
