// SPDX-License-Identifier: Apache-2.0
// The game screen: the prompt large enough to read from 3 m, the timer and score, a flash, a
// sound and a vibration on every decision, the round's summary, and (paired) the buttons.
'use strict';

const $ = (id) => document.getElementById(id);
const model = new GameModel();
let audio = null;       // created on the first tap: browsers allow sound only after a gesture
let wakeLock = null;

const socket = new TiltSocket({
  attitude: false,
  onConnection: (c, s) => { showConnection(c); showControls(s.paired); },
  handlers: {
    hello: (l) => model.snapshot(l.game, l.seq, true),
    reply: (l) => { if (l.cmd === 'status' && l.ok) model.snapshot(l.game, l.seq, false); },
    game: (l) => { model.event(l); traceUpdate(l, 'game', () => ({ prompt: $('prompt').dataset.text || '', score: $('score').textContent })); },
  },
});

model.onChange((s, cause) => render(s, cause));

let gesturesPicked = false;
$('gestures-choice').addEventListener('change', () => { gesturesPicked = true; });

function render(s, cause) {
  if (!s) return;
  // The vocabulary in force (the round's, or [game] gestures) until the player picks one.
  if (!gesturesPicked && (s.gestures === 'tilt' || s.gestures === 'nod')) $('gestures-choice').value = s.gestures;
  $('score').textContent = s.score;
  $('round-label').textContent = s.round ? `round ${s.round}` : 'no round';
  $('deck').textContent = s.deck || '';
  const playing = s.state !== 'idle';
  document.body.classList.toggle('playing', playing);
  const prompt = playing ? (s.prompt || '') : '';
  if ($('prompt').dataset.text !== prompt) {
    $('prompt').dataset.text = prompt;
    $('prompt').textContent = prompt;
    fitPrompt();
  }
  $('state-line').textContent = stateLine(s);
  if (cause.kind === 'correct' || cause.kind === 'skip') decide(cause);
  if (cause.kind === 'round_ended' || cause.kind === 'stopped' || (cause.kind === 'snapshot' && !playing)) showSummary(s.last_round);
  if (cause.kind === 'round_started' || cause.kind === 'reset' || (cause.kind === 'snapshot' && playing)) $('summary').hidden = true;
  if (playing) keepAwake(); else releaseWake();
  tick();
}

function stateLine(s) {
  switch (s.state) {
    case 'waiting_for_neutral': return 'head upright…';
    case 'prompt': return '';
    default: return s.last_round ? 'round over' : 'ready — press start';
  }
}

// Largest font that fits the stage: long place names wrap between words and shrink; a word is
// broken only if it cannot fit even at the smallest size.
function fitPrompt() {
  const el = $('prompt');
  const stage = $('stage');
  if (!el.textContent) return;
  el.classList.remove('breakable');
  let size = Math.min(stage.clientWidth / 3.2, stage.clientHeight / 1.6);
  const fits = () => el.scrollWidth <= stage.clientWidth * 0.96 && el.scrollHeight <= stage.clientHeight * 0.9;
  el.style.fontSize = `${size}px`;
  for (let i = 0; i < 60 && !fits() && size > 16; i++) {
    size *= 0.93;
    el.style.fontSize = `${size}px`;
  }
  if (!fits()) el.classList.add('breakable');
}
window.addEventListener('resize', fitPrompt);

function decide(e) {
  const ok = e.kind === 'correct';
  const f = $('flash');
  $('flash-text').textContent = ok ? '✓' : 'skip';
  f.className = `flash ${ok ? 'ok' : 'skip'}`;
  f.hidden = false;
  clearTimeout(decide.timer);
  decide.timer = setTimeout(() => { f.hidden = true; }, 450);
  if (navigator.vibrate) navigator.vibrate(ok ? [90] : [40, 60, 40]);
  beep(ok);
}

// A short tone: rising for correct, falling for skip.
function beep(ok) {
  if (!audio) return;
  const t = audio.currentTime;
  const o = audio.createOscillator(), g = audio.createGain();
  o.type = 'sine';
  o.frequency.setValueAtTime(ok ? 660 : 440, t);
  o.frequency.linearRampToValueAtTime(ok ? 990 : 300, t + 0.15);
  g.gain.setValueAtTime(0.0001, t);
  g.gain.exponentialRampToValueAtTime(0.3, t + 0.02);
  g.gain.exponentialRampToValueAtTime(0.0001, t + 0.25);
  o.connect(g).connect(audio.destination);
  o.start(t); o.stop(t + 0.3);
}
function unlockAudio() {
  if (audio || !(window.AudioContext || window.webkitAudioContext)) return;
  try { audio = new (window.AudioContext || window.webkitAudioContext)(); } catch (e) { audio = null; }
}
document.addEventListener('pointerdown', unlockAudio, { once: true });

function showSummary(r) {
  const box = $('summary');
  if (!r) { box.hidden = true; return; }
  $('summary-title').textContent = `Round ${r.round} — ${r.reason === 'stopped' ? 'stopped' : r.reason === 'deck_empty' ? 'deck done' : "time's up"}`;
  $('summary-score').textContent = `${r.score} correct, ${r.skipped.length} skipped`;
  const fill = (id, items) => {
    const ol = $(id);
    ol.replaceChildren(...items.map((p) => { const li = document.createElement('li'); li.textContent = p.prompt; return li; }));
  };
  fill('summary-correct', r.correct);
  fill('summary-skipped', r.skipped);
  $('summary-unanswered').textContent = r.unanswered ? `on screen at the end: ${r.unanswered}` : '';
  box.hidden = false;
}

// Screen wake lock where the browser offers it (secure contexts only: not over plain HTTP on a LAN).
async function keepAwake() {
  if (wakeLock || !('wakeLock' in navigator)) return;
  try { wakeLock = await navigator.wakeLock.request('screen'); wakeLock.addEventListener('release', () => { wakeLock = null; }); } catch (e) { wakeLock = null; }
}
function releaseWake() { if (wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; } }
document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible' && model.state && model.state.state !== 'idle') keepAwake(); });

function tick() { $('timer').textContent = fmtClock(model.remainingNow()); }
setInterval(tick, 200);

// ---- commands (paired browsers) ----
function showControls(paired) {
  $('pair-form').hidden = paired;
  $('commands').hidden = !paired;
}

function startFields() {
  const f = {};
  if ($('deck-choice').value) f.deck = $('deck-choice').value;
  if ($('round-choice').value) f.round_s = Number($('round-choice').value);
  f.gestures = $('gestures-choice').value;
  return f;
}

async function command(cmd, fields) {
  unlockAudio();
  $('command-error').textContent = '';
  try {
    const r = await socket.send(cmd, fields);
    if (!r.ok) $('command-error').textContent = r.error ? r.error.message : `${cmd} failed`;
    return r;
  } catch (e) {
    $('command-error').textContent = e.message;
    return null;
  }
}

$('start').addEventListener('click', () => command('game.start', startFields()));
$('stop').addEventListener('click', () => command('game.stop'));
$('neutral').addEventListener('click', () => command('game.neutral'));
$('restart').addEventListener('click', async () => {
  if (model.state && model.state.state !== 'idle') await command('game.stop');
  await command('game.start', startFields());
});

$('pair-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  unlockAudio();
  $('pair-error').textContent = '';
  try { await socket.pair($('pair-code').value); $('pair-code').value = ''; } catch (e) { $('pair-error').textContent = e.message; }
});
