/** One row of the `npm run bench` table. */
export interface BenchRow {
  id: string;
  measure: string;
  value: string;
  target: string;
  pass: boolean;
}
