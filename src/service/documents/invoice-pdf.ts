// An invoice record (the accounting API's Invoice, as synced) rendered as a PDF: header,
// dates, customer, the line table and the totals. Lines are wrapped here rather than by
// pdfkit so that a row can be measured first and the table continued across pages with
// its header repeated. Knows nothing of HTTP; the service runs it in a render thread
// (render-thread.ts), since a long invoice takes seconds.
import PDFDocument from 'pdfkit';

type Json = Record<string, unknown>;

const MARGIN = 50;
const FOOTER_SPACE = 24;
const FONT = 'Helvetica';
const BOLD = 'Helvetica-Bold';
const BODY_SIZE = 9;
const LINE = 12;
const CELL_GAP = 8;

interface Column {
  title: string;
  width: number;
  align: 'left' | 'right';
}

// A4 less the margins is 495 points wide.
const COLUMNS: Column[] = [
  { title: 'Description', width: 195, align: 'left' },
  { title: 'Quantity', width: 50, align: 'right' },
  { title: 'Unit amount', width: 85, align: 'right' },
  { title: 'Tax', width: 80, align: 'right' },
  { title: 'Total', width: 85, align: 'right' },
];

// The standard fonts only encode WinAnsi: Latin-1 plus these code points (in 0x80–0x9F).
const WIN_ANSI_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** `text` with every character the standard fonts cannot encode replaced by '?' (one per code point). */
export function toWinAnsi(text: string): string {
  let out = '';
  for (const char of text.normalize('NFC')) {
    const code = char.codePointAt(0)!;
    if ((code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRAS.has(char)) out += char;
    else if (code === 0x09) out += ' ';
    else out += '?';
  }
  return out;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const obj = (value: unknown): Json => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});

const AMOUNT = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const QUANTITY = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
const NONE = '—';

/** The date part of an ISO timestamp; anything else as given. */
function day(value: unknown): string {
  const text = str(value);
  if (!text) return NONE;
  return /^\d{4}-\d{2}-\d{2}/.test(text) ? text.slice(0, 10) : text;
}

/** The PDF of one invoice record. Missing or mistyped fields show as '—'; never throws on the record's content. */
export async function renderInvoicePdf(record: unknown): Promise<Buffer> {
  const invoice = obj(record);
  const currency = str(invoice.currency) ?? '';
  const money = (value: unknown): string => {
    const n = num(value);
    if (n === undefined) return NONE;
    return currency ? `${currency} ${AMOUNT.format(n)}` : AMOUNT.format(n);
  };
  const number = str(invoice.invoiceNumber) ?? str(invoice.id) ?? NONE;
  const customer = obj(invoice.customerRef);
  const customerName = str(customer.companyName) ?? str(customer.id) ?? NONE;

  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: { Title: `Invoice ${number}`, Creator: 'ferry' },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = MARGIN;
  const right = doc.page.width - MARGIN;
  const bottom = () => doc.page.height - MARGIN - FOOTER_SPACE;
  let y = MARGIN;
  /** A new page (without the table header) unless `height` more points fit on this one. */
  const room = (height: number) => {
    if (y + height <= bottom()) return;
    doc.addPage();
    y = MARGIN;
  };

  /** One line of text, already fitted, at (x, y); right-aligned against x when asked. */
  const put = (text: string, x: number, atY: number, align: 'left' | 'right' = 'left', font?: string) => {
    const clean = toWinAnsi(text);
    if (font) doc.font(font);
    doc.text(clean, align === 'right' ? x - doc.widthOfString(clean) : x, atY, { lineBreak: false });
    if (font) doc.font(FONT);
  };

  /** `text` broken into lines no wider than `width` in the current font: at spaces, and inside words too long for a line. */
  const wrap = (text: string, width: number): string[] => {
    const lines: string[] = [];
    for (const paragraph of text.split(/\r\n|\r|\n/)) {
      const clean = toWinAnsi(paragraph);
      // Most cells fit on one line: measured once.
      if (doc.widthOfString(clean) <= width) {
        lines.push(clean.trim());
        continue;
      }
      let line = '';
      for (const word of clean.split(' ').filter((w) => w !== '')) {
        const candidate = line ? `${line} ${word}` : word;
        if (doc.widthOfString(candidate) <= width) {
          line = candidate;
          continue;
        }
        if (line) lines.push(line);
        line = '';
        let rest = word;
        while (doc.widthOfString(rest) > width) {
          let used = 0;
          let n = 0;
          while (n < rest.length - 1 && used + doc.widthOfString(rest[n]!) <= width) used += doc.widthOfString(rest[n++]!);
          n = Math.max(n, 1);
          lines.push(rest.slice(0, n));
          rest = rest.slice(n);
        }
        line = rest;
      }
      lines.push(line);
    }
    return lines;
  };

  // ------------------------------------------------------------------ header
  doc.font(BOLD).fontSize(20);
  put('Invoice', left, y);
  y += 30;
  doc.fontSize(10);
  const fields: Array<[string, string]> = [
    ['Invoice number', number],
    ['Issue date', day(invoice.issueDate)],
    ['Due date', day(invoice.dueDate)],
    ...(invoice.paidOnDate !== undefined ? [['Paid on', day(invoice.paidOnDate)] as [string, string]] : []),
    ['Status', str(invoice.status) ?? NONE],
    ['Currency', currency || NONE],
  ];
  const valueX = left + 100;
  for (const [label, value] of fields) {
    doc.font(FONT);
    wrap(value, right - valueX).forEach((line, n) => {
      room(14);
      if (n === 0) put(label, left, y, 'left', BOLD);
      put(line, valueX, y);
      y += 14;
    });
  }
  y += 10;
  room(28);
  put('Bill to', left, y, 'left', BOLD);
  y += 14;
  for (const line of wrap(customerName, right - left)) {
    room(14);
    put(line, left, y);
    y += 14;
  }
  y += 16;
  room(3 * LINE);

  // ------------------------------------------------------------------ lines
  const columnX: number[] = [];
  COLUMNS.reduce((x, column) => (columnX.push(x), x + column.width), left);
  const rule = (atY: number, width = 0.5) => doc.moveTo(left, atY).lineTo(right, atY).lineWidth(width).strokeColor('#999999').stroke();
  const tableHeader = () => {
    doc.font(BOLD).fontSize(BODY_SIZE);
    COLUMNS.forEach((column, i) => {
      const x = column.align === 'right' ? columnX[i]! + column.width : columnX[i]!;
      put(column.title, x, y, column.align);
    });
    y += LINE + 2;
    rule(y - 4, 1);
    doc.font(FONT).fontSize(BODY_SIZE);
  };
  const tablePage = () => {
    doc.addPage();
    y = MARGIN;
    tableHeader();
  };
  tableHeader();
  const freshPageLines = Math.floor((bottom() - MARGIN - (LINE + 2)) / LINE);

  const lineItems = Array.isArray(invoice.lineItems) ? invoice.lineItems : [];
  for (const item of lineItems.map(obj)) {
    const quantity = num(item.quantity);
    const cells = [str(item.description) ?? '', quantity === undefined ? NONE : QUANTITY.format(quantity), money(item.unitAmount), money(item.taxAmount), money(item.totalAmount)];
    const wrapped = cells.map((cell, i) => wrap(cell, COLUMNS[i]!.width - CELL_GAP));
    const height = Math.max(...wrapped.map((lines) => lines.length));
    let start = 0;
    while (start < height) {
      const fit = Math.floor((bottom() - y) / LINE);
      const rest = height - start;
      // A row that fits on a fresh page is never split; a taller one fills the page and goes on.
      if (rest > fit && (rest <= freshPageLines || fit < 1)) {
        tablePage();
        continue;
      }
      const take = Math.min(rest, fit);
      wrapped.forEach((lines, i) => {
        const column = COLUMNS[i]!;
        const x = column.align === 'right' ? columnX[i]! + column.width : columnX[i]!;
        lines.slice(start, start + take).forEach((line, n) => put(line, x, y + n * LINE, column.align));
      });
      start += take;
      y += take * LINE;
      if (start < height) tablePage();
    }
    y += 3;
    rule(y - 2);
  }
  if (lineItems.length === 0) {
    put('No lines.', left, y);
    y += LINE;
  }

  // ------------------------------------------------------------------ totals
  const totals: Array<[string, string, boolean]> = [
    ['Subtotal', money(invoice.subTotal), false],
    ...(num(invoice.totalDiscount) ? [['Discount', money(invoice.totalDiscount), false] as [string, string, boolean]] : []),
    ['Tax', money(invoice.totalTaxAmount), false],
    ['Total', money(invoice.totalAmount), true],
    ['Amount due', money(invoice.amountDue), true],
  ];
  y += 10;
  doc.fontSize(10);
  room(totals.length * 15);
  const labelX = right - 230;
  for (const [label, value, strong] of totals) {
    doc.font(strong ? BOLD : FONT);
    put(label, labelX, y);
    put(value, right, y, 'right');
    y += 15;
  }

  const note = str(invoice.note);
  if (note) {
    y += 12;
    doc.font(BOLD).fontSize(BODY_SIZE);
    room(2 * LINE);
    put('Note', left, y);
    y += LINE;
    doc.font(FONT);
    for (const line of wrap(note, right - left)) {
      room(LINE);
      put(line, left, y);
      y += LINE;
    }
  }

  // ------------------------------------------------------------------ footers
  const { start, count } = doc.bufferedPageRange();
  doc.font(FONT).fontSize(8).fillColor('#666666');
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    // Below the bottom margin pdfkit would start a new page; the footer is placed by hand.
    doc.page.margins.bottom = 0;
    const shortNumber = number.length > 60 ? `${number.slice(0, 59)}…` : number;
    put(`Invoice ${shortNumber} · page ${i - start + 1} of ${count}`, right, doc.page.height - MARGIN, 'right');
  }
  doc.end();
  return finished;
}
