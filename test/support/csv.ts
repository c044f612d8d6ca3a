// A strict RFC 4180 reader for tests: fields quoted or not, quotes doubled inside quotes, CRLF between
// records. Anything else (a bare LF, a quote inside an unquoted field, text after a closing quote) throws,
// so a test reading our export also checks that it is well-formed.
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  const field = (): string => {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          return value;
        }
        value += text[i++];
      }
    }
    const start = i;
    while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
      if (text[i] === '"' || text[i] === '\n') throw new Error(`bad character in unquoted field at ${i}`);
      i++;
    }
    return text.slice(start, i);
  };
  while (i < text.length) {
    record.push(field());
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.slice(i, i + 2) !== '\r\n') throw new Error(`expected CRLF at ${i}`);
    i += 2;
    records.push(record);
    record = [];
  }
  return records;
}
