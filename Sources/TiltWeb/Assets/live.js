// SPDX-License-Identifier: Apache-2.0
// The live view: tilt gauge with the game's thresholds, a compass (the heading and its source),
// a scrolling 30 s plot of roll, pitch and yaw with decision markers, the sources, places and
// quest cells around the fix.
'use strict';

const $ = (id) => document.getElementById(id);
const SVGNS = 'http://www.w3.org/2000/svg';
const WINDOW_MS = 30000;
const model = new GameModel();
const samples = [];      // {t, roll, pitch, yaw} by arrival time (performance.now())
const decisions = [];    // {t, kind}
const cells = new Map(); // cell_name → 'available' | 'completed'
let rules = null;        // the game's config: thresholds and mode
let latest = null, lastFixAt = null, lastNearby = null, dirty = false;

const socket = new TiltSocket({
  attitude: true,
  onConnection: (c) => showConnection(c),
  handlers: {
    hello: (l) => { model.snapshot(l.game, l.seq, true); sources(l.sources); if (l.fix) fix(l.fix); },
    reply: (l) => { if (l.cmd === 'status' && l.ok) status(l); },
    attitude: (l) => { attitude(l); traceUpdate(l, 'attitude'); },
    game: (l) => { model.event(l); if (l.kind === 'correct' || l.kind === 'skip') decisions.push({ t: performance.now(), kind: l.kind }); log(l); traceUpdate(l, 'game'); },
    status: (l) => { log(l); },
    fix: (l) => fix(l),
    place: (l) => log(l),
    credit: (l) => log(l),
    quest: (l) => { cells.set(l.cell_name, l.event); log(l); drawMap(); },
    web: (l) => { if (l.event === 'nearby') { lastNearby = l; drawMap(); } },
  },
});

model.onChange((s) => {
  if (!s) return;
  rules = s.config || rules;
  $('game-line').textContent = s.state === 'idle' ? 'idle' : `round ${s.round}, score ${s.score}${s.prompt ? ` — ${s.prompt}` : ''}`;
  drawGauge();
});

function status(l) {
  model.snapshot(l.game, l.seq, false);
  sources(l.sources);
  $('rate').textContent = l.sample_rate_hz !== undefined ? `${l.sample_rate_hz.toFixed(1)} Hz` : '–';
  $('clients').textContent = `${l.clients} on the socket`;
  if (l.fix && lastFixAt === null) fix(l.fix);
}

function sources(list) {
  for (const s of list || []) {
    const text = `${s.state}${s.rate_hz ? ` at ${s.rate_hz} Hz` : ''}${s.device ? ` — ${s.device}` : ''}${s.state !== 'streaming' && s.message ? ` (${s.message})` : ''}`;
    if (s.source === 'imu') $('imu').textContent = text;
    if (s.source === 'gps') $('gps').textContent = text;
  }
}

function fix(l) {
  lastFixAt = performance.now();
  $('position').textContent = l.lat !== undefined ? `${l.lat.toFixed(5)}, ${l.lon.toFixed(5)}${l.eph_m ? ` ±${Math.round(l.eph_m)} m` : ''}` : `no position (mode ${l.mode})`;
}

function attitude(l) {
  latest = l;
  samples.push({ t: performance.now(), roll: l.roll_deg, pitch: l.pitch_deg, yaw: l.yaw_deg });
  while (samples.length && samples[0].t < performance.now() - WINDOW_MS - 1000) samples.shift();
  dirty = true;
}

// The game's tilt: |roll| in absolute mode (as TiltMeter computes it); in relative mode the
// daemon's own tilt_deg from its status, once a second.
function tilt() {
  if (rules && rules.mode === 'relative') return model.state ? model.state.tilt_deg : null;
  return latest ? Math.abs(latest.roll_deg) : null;
}

function frame() {
  if (dirty && latest) {
    $('roll').textContent = `${latest.roll_deg.toFixed(1)}°`;
    $('pitch').textContent = `${latest.pitch_deg.toFixed(1)}°`;
    // No yaw from an accelerometer-only IMU: a dash, not an exception that stops the frames.
    $('yaw').textContent = latest.yaw_deg !== undefined ? `${latest.yaw_deg.toFixed(1)}°` : '–';
    $('rest').textContent = latest.at_rest ? 'yes' : 'no';
    drawGauge();
    drawCompass(latest);
  }
  drawPlot();
  $('fix-age').textContent = lastFixAt === null ? 'no fix yet' : `${((performance.now() - lastFixAt) / 1000).toFixed(1)} s`;
  dirty = false;
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);

// ---- gauge: 0° (head down) on the left, 180° (head up) on the right ----
function el(name, attrs, parent) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
function polar(deg, r) { const a = Math.PI - deg * Math.PI / 180; return [150 + r * Math.cos(a), 150 - r * Math.sin(a)]; }
function arc(from, to, r, color, g) {
  const [x0, y0] = polar(from, r), [x1, y1] = polar(to, r);
  el('path', { d: `M${x0},${y0} A${r},${r} 0 0 1 ${x1},${y1}`, stroke: color, 'stroke-width': 22, fill: 'none' }, g);
}
function drawGauge() {
  const g = $('gauge');
  g.replaceChildren();
  const low = rules ? rules.low_threshold_deg : 63, high = rules ? rules.high_threshold_deg : 117;
  const swap = rules && rules.low_side === 'skip';
  arc(0, low, 120, swap ? '#f08c2e' : '#2fbf5f', g);
  arc(low, high, 120, '#3a4350', g);
  arc(high, 180, 120, swap ? '#2fbf5f' : '#f08c2e', g);
  for (const [deg, label] of [[0, '0°'], [low, `${low}°`], [90, '90°'], [high, `${high}°`], [180, '180°']]) {
    const [x, y] = polar(deg, 146);
    el('text', { x, y: y + 4, fill: '#9aa4b1', 'font-size': 11, 'text-anchor': 'middle' }, g).textContent = label;
  }
  const t = tilt();
  if (t !== null && t !== undefined) {
    const [x, y] = polar(Math.max(0, Math.min(180, t)), 108);
    el('line', { x1: 150, y1: 150, x2: x, y2: y, stroke: '#f4f6f8', 'stroke-width': 5, 'stroke-linecap': 'round' }, g);
    el('circle', { cx: 150, cy: 150, r: 7, fill: '#f4f6f8' }, g);
    el('text', { x: 150, y: 96, fill: '#f4f6f8', 'font-size': 30, 'font-weight': 700, 'text-anchor': 'middle', stroke: '#1c2128', 'stroke-width': 6, 'paint-order': 'stroke' }, g).textContent = `${t.toFixed(0)}°`;
  }
  el('text', { x: 30, y: 168, fill: '#2fbf5f', 'font-size': 12 }, g).textContent = swap ? 'skip' : 'correct';
  el('text', { x: 270, y: 168, fill: '#f08c2e', 'font-size': 12, 'text-anchor': 'end' }, g).textContent = swap ? 'correct' : 'skip';
}

// ---- compass: north up, the needle where the wearer faces ----
// The needle shows the true heading when the daemon knows it, else the magnetic one (the
// `north` label says which); its colour the source: blue the magnetometer, green the GPS
// course, orange while the magnetometer's field is disturbed (the gyro holds the heading).
// The state is also on the SVG's data attributes (heading, north, source) for tests.
function drawCompass(l) {
  const c = $('compass');
  c.replaceChildren();
  const fmt = (d) => (d === undefined ? '–' : `${d.toFixed(1)}°`);
  const source = l.heading_source || 'none';
  $('heading-mag').textContent = fmt(l.heading_deg);
  $('heading-true').textContent = fmt(l.true_heading_deg);
  $('heading-source').textContent = source + (l.mag_disturbed ? ' (disturbed)' : '');
  el('circle', { cx: 0, cy: 0, r: 100, fill: 'none', stroke: '#2c333d', 'stroke-width': 2 }, c);
  for (let d = 0; d < 360; d += 30) {
    const a = d * Math.PI / 180, r0 = d % 90 === 0 ? 86 : 92;
    el('line', { x1: r0 * Math.sin(a), y1: -r0 * Math.cos(a), x2: 100 * Math.sin(a), y2: -100 * Math.cos(a), stroke: '#9aa4b1', 'stroke-width': 2 }, c);
  }
  for (const [label, d] of [['N', 0], ['E', 90], ['S', 180], ['W', 270]]) {
    const a = d * Math.PI / 180;
    el('text', { x: 72 * Math.sin(a), y: -72 * Math.cos(a) + 6, fill: d === 0 ? '#ff6b6b' : '#9aa4b1', 'font-size': 18, 'font-weight': 700, 'text-anchor': 'middle' }, c).textContent = label;
  }
  const heading = l.true_heading_deg !== undefined ? l.true_heading_deg : l.heading_deg;
  const north = l.true_heading_deg !== undefined ? 'true' : (l.heading_deg !== undefined ? 'magnetic' : '');
  c.dataset.source = source;
  c.dataset.north = north;
  c.dataset.heading = heading === undefined ? '' : String(heading);
  if (heading === undefined) {
    el('text', { x: 0, y: 6, fill: '#9aa4b1', 'font-size': 16, 'text-anchor': 'middle' }, c).textContent = 'no heading';
    return;
  }
  const color = l.mag_disturbed ? '#f08c2e' : source === 'course' ? '#2fbf5f' : '#4ea1ff';
  const needle = el('g', { id: 'needle', transform: `rotate(${heading})` }, c);
  el('path', { d: 'M0,-96 L9,0 L0,12 L-9,0 Z', fill: color }, needle);
  el('circle', { cx: 0, cy: 0, r: 5, fill: '#f4f6f8' }, c);
  el('text', { x: 0, y: 40, fill: '#f4f6f8', 'font-size': 22, 'font-weight': 700, 'text-anchor': 'middle', stroke: '#1c2128', 'stroke-width': 5, 'paint-order': 'stroke' }, c).textContent = `${heading.toFixed(0)}°`;
  el('text', { x: 0, y: 58, fill: '#9aa4b1', 'font-size': 12, 'text-anchor': 'middle' }, c).textContent = `${north} · ${source}`;
}

// ---- 30 s plot ----
function drawPlot() {
  const c = $('plot');
  const w = c.clientWidth, h = c.clientHeight, dpr = window.devicePixelRatio || 1;
  if (c.width !== w * dpr || c.height !== h * dpr) { c.width = w * dpr; c.height = h * dpr; }
  const ctx = c.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const now = performance.now();
  const x = (t) => w - (now - t) / WINDOW_MS * w;
  const y = (v) => h / 2 - v / 180 * (h / 2 - 12);
  ctx.strokeStyle = '#2c333d'; ctx.fillStyle = '#9aa4b1'; ctx.font = '11px sans-serif'; ctx.lineWidth = 1;
  for (const v of [-180, -90, 0, 90, 180]) { ctx.beginPath(); ctx.moveTo(0, y(v)); ctx.lineTo(w, y(v)); ctx.stroke(); ctx.fillText(`${v}°`, 4, y(v) + (v > 0 ? 11 : -3)); }
  for (let s = 5; s < 30; s += 5) { ctx.beginPath(); ctx.moveTo(x(now - s * 1000), 0); ctx.lineTo(x(now - s * 1000), h); ctx.stroke(); ctx.fillText(`-${s} s`, x(now - s * 1000) + 3, h - 4); }
  for (const d of decisions) {
    if (d.t < now - WINDOW_MS) continue;
    ctx.strokeStyle = d.kind === 'correct' ? '#2fbf5f' : '#f08c2e'; ctx.setLineDash([4, 4]); ctx.lineWidth = 2;
    ctx.beginPath(); ctx.moveTo(x(d.t), 0); ctx.lineTo(x(d.t), h); ctx.stroke(); ctx.setLineDash([]);
    ctx.fillStyle = ctx.strokeStyle; ctx.fillText(d.kind, x(d.t) + 3, 12);
  }
  for (const [key, color] of [['roll', '#ff6b6b'], ['pitch', '#51cf66'], ['yaw', '#4ea1ff']]) {
    ctx.strokeStyle = color; ctx.lineWidth = 1.6; ctx.beginPath();
    let prev = null;
    for (const s of samples) {
      if (s.t < now - WINDOW_MS) continue;
      // Yaw wraps at ±180°: no line across the plot.
      if (prev !== null && Math.abs(s[key] - prev) > 180) ctx.moveTo(x(s.t), y(s[key])); else ctx.lineTo(x(s.t), y(s[key]));
      prev = s[key];
    }
    ctx.stroke();
  }
}

// ---- map: metres east/north of the fix, no tiles ----
function drawMap() {
  const m = $('map');
  m.replaceChildren();
  if (!lastNearby) { el('text', { x: 0, y: 0, fill: '#9aa4b1', 'text-anchor': 'middle', 'font-size': 16 }, m).textContent = 'no fix yet'; return; }
  const k = 200 / lastNearby.radius_m;
  for (const c of lastNearby.cells) {
    const state = cells.get(c.cell_name);
    el('rect', { x: c.west_m * k, y: -(c.south_m + c.height_m) * k, width: c.width_m * k, height: c.height_m * k,
      fill: state === 'completed' ? '#163b24' : state === 'available' ? '#3a2c10' : 'none',
      stroke: c.here ? '#4ea1ff' : '#2c333d', 'stroke-width': c.here ? 2 : 1 }, m);
  }
  if (lastNearby.eph_m) el('circle', { cx: 0, cy: 0, r: lastNearby.eph_m * k, fill: '#4ea1ff22', stroke: '#4ea1ff66' }, m);
  for (const p of lastNearby.places) {
    const cx = p.east_m * k, cy = -p.north_m * k;
    el('circle', { cx, cy, r: 4, fill: '#f4f6f8' }, m);
    // Labels point inwards, so the ones on the right do not run off the map.
    const right = cx > 40;
    el('text', { x: right ? cx - 6 : cx + 6, y: cy + 4, fill: '#f4f6f8', 'font-size': 11, 'text-anchor': right ? 'end' : 'start',
      stroke: '#1c2128', 'stroke-width': 3, 'paint-order': 'stroke' }, m).textContent = `${p.name} ${p.distance_m} m`;
  }
  el('circle', { cx: 0, cy: 0, r: 6, fill: '#4ea1ff', stroke: '#fff', 'stroke-width': 2 }, m);
  el('text', { x: -205, y: 205, fill: '#9aa4b1', 'font-size': 11 }, m).textContent = `±${lastNearby.radius_m} m · quest cells: blue = here, amber = available, green = done`;
}
drawMap();

function log(l) {
  const li = document.createElement('li');
  const what = l.kind || l.event || l.state || '';
  const detail = l.prompt || l.name || l.cell_name || l.message || '';
  li.textContent = `${l.class} ${what} ${detail}`.trim();
  const ol = $('events');
  ol.prepend(li);
  while (ol.children.length > 60) ol.lastChild.remove();
}
