// Runs one SQL statement in DuckDB and prints the result rows as JSON (one array).
// It is the independent engine that tests and benchmarks compare ceiling against:
//   node scripts/duckdb/query.mjs "SELECT count(*) AS n FROM 'run.parquet'"
// BigInt values are printed as numbers (exact below 2^53, which counts and
// nanosecond sums of one run stay under).
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: node query.mjs "SQL"');
  process.exit(2);
}
const instance = await DuckDBInstance.create(':memory:', { threads: process.env.DUCKDB_THREADS || '2' });
const conn = await instance.connect();
try {
  const reader = await conn.runAndReadAll(sql);
  const rows = reader.getRowObjectsJS();
  process.stdout.write(JSON.stringify(rows, (k, v) => (typeof v === 'bigint' ? Number(v) : v)) + '\n');
} catch (err) {
  console.error(`duckdb: ${err.message}`);
  process.exit(1);
}
