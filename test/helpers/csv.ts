/** The CSV reader of reports, for the tests of `report.write`. */
export { csvObjects, parseCsv } from '../../src/util/csv.js';
