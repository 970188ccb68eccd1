/**
 * A process that starts the harness's PostgreSQL server, prints `{"data": <its data folder>, "pid": <the
 * postmaster's pid>}` on one line, and then ends as its argument says: `end` (nothing left to do), `exit`
 * (process.exit, as mocha --exit does), `throw` (an uncaught error), or `wait` (until a signal ends it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { postgresUrl } from './postgres.js';

const how = process.argv[2];
const client = new pg.Client(await postgresUrl());
await client.connect();
const data =
  (await client.query<{ data_directory: string }>('show data_directory')).rows[0]?.data_directory ?? '';
await client.end();
const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
process.stdout.write(`${JSON.stringify({ data, pid })}\n`);

if (how === 'exit') process.exit(0);
if (how === 'throw')
  setTimeout(() => {
    throw new Error('a failing test');
  });
if (how === 'wait') setInterval(() => {}, 1000);
