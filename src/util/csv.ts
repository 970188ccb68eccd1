/**
 * A CSV reader (RFC 4180: fields in double quotes may hold commas, line breaks and doubled quotes), so that a
 * report of `report.write` is read back the way a spreadsheet would read it: by `fleetbook test`, and by the
 * tests of `report.write`.
 */

/** The records of `text`, each a list of fields; a final line break ends the last record. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (c === '\r') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  if (quoted) throw new Error('CSV ends inside a quoted field');
  if (field !== '' || record.length) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/** The records of `text` as objects keyed by the header's names. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...records] = parseCsv(text);
  for (const r of records)
    if (r.length !== header.length)
      throw new Error(`a record has ${r.length} fields, the header ${header.length}: ${r.join(',')}`);
  return {
    header,
    rows: records.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? '']))),
  };
}
