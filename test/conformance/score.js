// score.js: turn the conformance suite's results into one score line.
// usage: node score.js NODE_MODULES RESULTS_DIR REVISION SCENARIO EXPECTED_FILE [LEG]
// LEG is server (the default) or client.
// Scored are the suite's scenarios for LEG plus the extension scenarios of
// expected/scored-extensions.yaml for REVISION.
// Prints PASS/FAIL/XFAIL per scored scenario, info lines for unscored ones,
// and last: "conformance-<revision>: N passed, M failed". Exit 0 when every
// failing scenario is listed in EXPECTED_FILE, 1 otherwise.
const fs = require('fs'), path = require('path');
const [mods, out, rev, only, expectedFile, legArg] = process.argv.slice(2);
const leg = legArg || 'server';
const YAML = require(path.join(mods, 'yaml'));
const reqs = YAML.parse(fs.readFileSync(path.join(mods, '@modelcontextprotocol/conformance/requirements', rev + '.yaml'), 'utf8')) || {};
// Extension scenarios the project scores although the suite does not
// (expected/scored-extensions.yaml, by revision and leg).
const extFile = path.join(__dirname, 'expected', 'scored-extensions.yaml');
const ext = fs.existsSync(extFile) ? (((YAML.parse(fs.readFileSync(extFile, 'utf8')) || {})[rev] || {})[leg] || []) : [];
const scored = only ? [only] : [...(reqs[leg] || []), ...ext.filter((n) => !(reqs[leg] || []).includes(n))];
const unscored = only ? [] : (reqs.not_scored || []).filter((e) => e.leg === leg && !ext.includes(e.scenario));

// Server leg: <out>/server-<scenario>-<ISO time>/checks.json. Client leg:
// <out>/<scenario>-<ISO time>/checks.json, where a scenario such as
// auth/metadata-default makes a subdirectory. Keep the newest per scenario.
const results = {};
const stamp = '-\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z$';
if (leg === 'server') {
  for (const d of fs.readdirSync(out).sort()) {
    const m = new RegExp('^server-(.+)' + stamp).exec(d);
    const f = path.join(out, d, 'checks.json');
    if (m && fs.existsSync(f)) results[m[1]] = JSON.parse(fs.readFileSync(f, 'utf8'));
  }
} else {
  for (const name of [...scored, ...unscored.map((e) => e.scenario)]) {
    const dir = path.dirname(path.join(out, name)), base = path.basename(name);
    if (!fs.existsSync(dir)) continue;
    const re = new RegExp('^' + base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + stamp);
    for (const d of fs.readdirSync(dir).sort()) {
      const f = path.join(dir, d, 'checks.json');
      if (re.test(d) && fs.existsSync(f)) results[name] = JSON.parse(fs.readFileSync(f, 'utf8'));
    }
  }
}
const failing = (name) => results[name] ? results[name].filter((c) => c.status === 'FAILURE') : null;

// Expected failures: YAML 'server:' list of 'scenario' or 'scenario:check-id'.
const allowed = {};
if (expectedFile && fs.existsSync(expectedFile)) {
  for (const e of (YAML.parse(fs.readFileSync(expectedFile, 'utf8')) || {})[leg] || []) {
    const [s, id] = String(e).split(/:(.*)/s);
    (allowed[s] = allowed[s] || new Set()).add(id || '*');
  }
}

let passed = 0, failed = 0, uncovered = 0;
for (const name of scored) {
  const bad = failing(name), ok = allowed[name];
  if (bad && bad.length === 0) {
    passed++;
    console.log(`PASS ${name}` + (ok ? '   (stale expected-failures entry: now passes)' : ''));
    continue;
  }
  failed++;
  const covered = !!ok && (ok.has('*') || (bad !== null && bad.every((c) => ok.has(c.id))));
  if (!covered) uncovered++;
  const ids = bad ? [...new Set(bad.map((c) => c.id))] : ['no-result'];
  console.log(`${covered ? 'XFAIL' : 'FAIL'} ${name}: ${ids.join(', ')}`);
  for (const c of bad || [{ id: 'no-result', errorMessage: 'no checks.json: the scenario crashed or did not run (see suite.log)' }]) {
    const msg = String(c.errorMessage || c.description || '').replace(/\s+/g, ' ');
    console.log(`    ${c.id}: ${msg.length > 300 ? msg.slice(0, 300) + '...' : msg}`);
  }
}
for (const e of unscored) {
  const bad = failing(e.scenario);
  const st = bad === null ? 'NO-RESULT' : bad.length ? 'FAIL' : 'PASS';
  console.log(`info (not scored, ${e.reason}) ${st} ${e.scenario}` + (bad && bad.length ? `: ${[...new Set(bad.map((c) => c.id))].join(', ')}` : ''));
}
console.log(`results: ${out}`);
console.log(`conformance${leg === 'client' ? '-client' : ''}-${rev}: ${passed} passed, ${failed} failed`);
process.exit(uncovered > 0 ? 1 : 0);
