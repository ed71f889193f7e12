// Times Mastra's own code scorers (@mastra/evals) on the pairs bench/code_scorers.py wrote.
//
//   node bench/mastra_code_scorers.cjs <node_modules parent folder> <pairs.json> <scorer>
//
// pairs.json is {"warmup": [[input, output], ...], "pairs": [[input, output], ...]}. Each
// timed pair is scored once, awaited in turn (as one run after another in an eval loop), after
// the warm-up pairs (at most WARMUP_SECONDS of CPU time of them: counted in CPU time, not on
// the wall clock, so that a loaded machine does not cut Mastra's warm-up short and time a
// V8 that has not compiled its hot paths yet) have let V8 compile the hot paths.
// Prints one JSON line:
// {"scorer", "runs", "seconds", "runsPerSecond", "cpuSeconds", "cpuRunsPerSecond", "meanScore"}
// (cpu: the process's user + system time over the timed runs, every thread of it counted:
// on a loaded machine it is the steadier measure).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

const WARMUP_SECONDS = 3;

const FACTORIES = {
  'keyword coverage': 'createKeywordCoverageScorer',
  completeness: 'createCompletenessScorer',
  'content similarity': 'createContentSimilarityScorer',
  'textual difference': 'createTextualDifferenceScorer',
  tone: 'createToneScorer',
};

function fail(message) {
  process.stderr.write(`mastra_code_scorers: ${message}\n`);
  process.exit(2);
}

// Mastra's agent run shapes: the input record with its messages, the output message list.
function runOf([input, output]) {
  return {
    input: { inputMessages: [{ role: 'user', content: input }], rememberedMessages: [] },
    output: [{ role: 'assistant', content: output }],
  };
}

async function main() {
  const [prefix, pairsFile, scorerName] = process.argv.slice(2);
  if (!prefix || !pairsFile || !scorerName) fail('usage: <prefix> <pairs.json> <scorer>');
  const factoryName = FACTORIES[scorerName];
  if (!factoryName) fail(`unknown scorer ${JSON.stringify(scorerName)}`);
  const requireFromPrefix = createRequire(path.join(path.resolve(prefix), 'package.json'));
  const prebuilt = requireFromPrefix('@mastra/evals/scorers/prebuilt');
  const scorer = prebuilt[factoryName]();
  const { warmup, pairs } = JSON.parse(fs.readFileSync(pairsFile, 'utf8'));
  const warmupRuns = warmup.map(runOf);
  const timedRuns = pairs.map(runOf);
  const warmupStarted = process.cpuUsage();
  for (const run of warmupRuns) {
    await scorer.run(run);
    const used = process.cpuUsage(warmupStarted);
    if ((used.user + used.system) / 1e6 > WARMUP_SECONDS) break;
  }

  let total = 0;
  const cpuStarted = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (const run of timedRuns) {
    const result = await scorer.run(run);
    total += result.score;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStarted);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const report = {
    scorer: scorerName,
    runs: timedRuns.length,
    seconds,
    runsPerSecond: timedRuns.length / seconds,
    cpuSeconds,
    cpuRunsPerSecond: timedRuns.length / cpuSeconds,
    meanScore: total / timedRuns.length,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => fail(error && error.stack ? error.stack : String(error)));
