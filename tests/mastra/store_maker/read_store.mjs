// Reads a Mastra store back with Mastra's own API, for scorelab's write-back tests:
//   node read_store.mjs --store file:/path/mastra.db
// Prints one JSON line: every experiment (id, name, status, datasetId, counts) with its results
// (item id, comment, tags) and its scores counted per scorer through the scores API.
import { Mastra } from '@mastra/core';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, value, index, all) => {
    if (value.startsWith('--')) pairs.push([value.slice(2), all[index + 1]]);
    return pairs;
  }, []),
);
async function makeStorage(url) {
  if (url.startsWith('postgres')) {
    const { PostgresStore } = await import('@mastra/pg');
    return new PostgresStore({ id: 'scorelab-read-pg', connectionString: url, schemaName: args.schema ?? 'public' });
  }
  const { LibSQLStore } = await import('@mastra/libsql');
  return new LibSQLStore({ id: 'scorelab-read-libsql', url });
}
const storage = await makeStorage(args.store);
const mastra = new Mastra({ storage, logger: false });
const scores = await storage.getStore('scores');
const listed = await mastra.datasets.list({ perPage: 100 });
const out = { datasets: [], experiments: [] };
for (const summary of listed.datasets) {
  const dataset = await mastra.datasets.get({ id: summary.id });
  const items = await dataset.listItems({ perPage: 1000 });
  const itemList = Array.isArray(items) ? items : items.items;
  out.datasets.push({ id: summary.id, name: summary.name, version: summary.version,
                      items: itemList.length });
  const experiments = await dataset.listExperiments({ perPage: 100 });
  for (const experiment of experiments.experiments) {
    const results = await dataset.listExperimentResults({ experimentId: experiment.id,
                                                          perPage: 1000 });
    const page = await scores.listScoresByRunId({ runId: experiment.id,
                                                  pagination: { page: 0, perPage: 10000 } });
    const perScorer = {};
    const sums = {};
    for (const score of page.scores) {
      perScorer[score.scorerId] = (perScorer[score.scorerId] ?? 0) + 1;
      sums[score.scorerId] = (sums[score.scorerId] ?? 0) + score.score;
    }
    out.experiments.push({
      id: experiment.id, name: experiment.name, status: experiment.status,
      datasetId: experiment.datasetId, metadata: experiment.metadata ?? null,
      succeededCount: experiment.succeededCount,
      results: results.results.map((r) => ({ itemId: r.itemId, comment: r.comment ?? null,
                                             tags: r.tags ?? null })),
      scoreCount: page.pagination.total, perScorer,
      means: Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / perScorer[k]])),
    });
  }
}
console.log(JSON.stringify(out));
process.exit(0);
