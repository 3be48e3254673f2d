// SPDX-License-Identifier: Apache-2.0
// Recordings in [web] recordings, drawn by the same code as `tiltd plot`.
'use strict';
const $ = (id) => document.getElementById(id);
let current = null;
function show(name) {
  current = name;
  $('title').textContent = name;
  $('plot').src = `/api/recordings/${encodeURIComponent(name)}/plot.svg?game=${$('game').checked ? 1 : 0}`;
  $('plot').alt = `plot of ${name}`;
}
$('game').addEventListener('change', () => { if (current) show(current); });
fetch('/api/recordings').then((r) => r.json()).then((d) => {
  $('dir').textContent = d.directory || 'no directory set ([web] recordings)';
  $('list').replaceChildren(...d.recordings.map((n) => {
    const li = document.createElement('li'), a = document.createElement('a');
    a.href = '#'; a.textContent = n; a.addEventListener('click', (e) => { e.preventDefault(); show(n); });
    li.appendChild(a); return li;
  }));
});
