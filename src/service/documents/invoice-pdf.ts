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
  const money = moneyFormat(currency);
  const number = str(invoice.invoiceNumber) ?? str(invoice.id) ?? NONE;

  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    bufferPages: true,
    info: { Title: `Invoice ${number}`, Creator: 'ferry' },
  });
  const finished = collect(doc);
  const sheet = new Sheet(doc);
  drawHeader(sheet, invoice, number, currency);
  drawLineTable(sheet, Array.isArray(invoice.lineItems) ? invoice.lineItems : [], money);
  drawTotals(sheet, invoice, money);
  drawNote(sheet, str(invoice.note));
  drawFooters(sheet, number);
  doc.end();
  return finished;
}

type Doc = PDFKit.PDFDocument;
type Money = (value: unknown) => string;

/** Amounts with the invoice's currency code in front, when it has one. */
function moneyFormat(currency: string): Money {
  return (value) => {
    const n = num(value);
    if (n === undefined) return NONE;
    return currency ? `${currency} ${AMOUNT.format(n)}` : AMOUNT.format(n);
  };
}

/** The document's bytes, once it has ended. */
function collect(doc: Doc): Promise<Buffer> {
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
}

/** The document and where the next line goes on its current page. */
class Sheet {
  y = MARGIN;
  readonly left = MARGIN;
  readonly right: number;

  constructor(readonly doc: Doc) {
    this.right = doc.page.width - MARGIN;
  }

  bottom(): number {
    return this.doc.page.height - MARGIN - FOOTER_SPACE;
  }

  /** A new page (without the table header) unless `height` more points fit on this one. */
  room(height: number): void {
    if (this.y + height <= this.bottom()) return;
    this.doc.addPage();
    this.y = MARGIN;
  }

  /** One line of text, already fitted, at (x, y); right-aligned against x when asked. */
  put(text: string, x: number, atY: number, align: 'left' | 'right' = 'left', font?: string): void {
    const doc = this.doc;
    const clean = toWinAnsi(text);
    if (font) doc.font(font);
    doc.text(clean, align === 'right' ? x - doc.widthOfString(clean) : x, atY, { lineBreak: false });
    if (font) doc.font(FONT);
  }

  /** `text` wrapped to the full width, from the left margin, `height` points a line. */
  paragraph(text: string, height: number): void {
    for (const line of wrap(this.doc, text, this.right - this.left)) {
      this.room(height);
      this.put(line, this.left, this.y);
      this.y += height;
    }
  }

  /** A grey rule across the page at `atY`. */
  rule(atY: number, width = 0.5): void {
    this.doc.moveTo(this.left, atY).lineTo(this.right, atY).lineWidth(width).strokeColor('#999999').stroke();
  }
}

/** `text` broken into lines no wider than `width` in the current font: at spaces, and inside words too long for a line. */
function wrap(doc: Doc, text: string, width: number): string[] {
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
      line = breakWord(doc, word, width, lines);
    }
    lines.push(line);
  }
  return lines;
}

/** Pushes onto `lines` the full-width pieces of a word too long for one; returns what is left of it. */
function breakWord(doc: Doc, word: string, width: number, lines: string[]): string {
  let rest = word;
  while (doc.widthOfString(rest) > width) {
    let used = 0;
    let n = 0;
    while (n < rest.length - 1 && used + doc.widthOfString(rest[n]!) <= width) used += doc.widthOfString(rest[n++]!);
    n = Math.max(n, 1);
    lines.push(rest.slice(0, n));
    rest = rest.slice(n);
  }
  return rest;
}

// ------------------------------------------------------------------ header

/** The title, the invoice's fields (label and value) and the customer billed. */
function drawHeader(sheet: Sheet, invoice: Json, number: string, currency: string): void {
  const { doc, left, right } = sheet;
  doc.font(BOLD).fontSize(20);
  sheet.put('Invoice', left, sheet.y);
  sheet.y += 30;
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
    wrap(doc, value, right - valueX).forEach((line, n) => {
      sheet.room(14);
      if (n === 0) sheet.put(label, left, sheet.y, 'left', BOLD);
      sheet.put(line, valueX, sheet.y);
      sheet.y += 14;
    });
  }
  sheet.y += 10;
  sheet.room(28);
  sheet.put('Bill to', left, sheet.y, 'left', BOLD);
  sheet.y += 14;
  const customer = obj(invoice.customerRef);
  sheet.paragraph(str(customer.companyName) ?? str(customer.id) ?? NONE, 14);
  sheet.y += 16;
  sheet.room(3 * LINE);
}

// ------------------------------------------------------------------ lines

/** The table of line items, continued across pages with its header repeated; 'No lines.' when there are none. */
function drawLineTable(sheet: Sheet, lineItems: unknown[], money: Money): void {
  const table = new LineTable(sheet);
  table.header();
  for (const item of lineItems.map(obj)) {
    const quantity = num(item.quantity);
    const cells = [str(item.description) ?? '', quantity === undefined ? NONE : QUANTITY.format(quantity), money(item.unitAmount), money(item.taxAmount), money(item.totalAmount)];
    table.row(cells.map((cell, i) => wrap(sheet.doc, cell, COLUMNS[i]!.width - CELL_GAP)));
  }
  if (lineItems.length === 0) {
    sheet.put('No lines.', sheet.left, sheet.y);
    sheet.y += LINE;
  }
}

/** The line table's columns and how its rows break across pages. */
class LineTable {
  /** Each column's left edge. */
  private readonly columnX: number[] = [];
  /** How many lines of a row fit on a page that holds nothing but the table header. */
  private readonly freshPageLines: number;

  constructor(private readonly sheet: Sheet) {
    COLUMNS.reduce((x, column) => (this.columnX.push(x), x + column.width), sheet.left);
    this.freshPageLines = Math.floor((sheet.bottom() - MARGIN - (LINE + 2)) / LINE);
  }

  /** Where column `i`'s text is placed from: its left edge, or its right one when it is right-aligned. */
  private x(i: number): number {
    const column = COLUMNS[i]!;
    return column.align === 'right' ? this.columnX[i]! + column.width : this.columnX[i]!;
  }

  header(): void {
    const { sheet } = this;
    sheet.doc.font(BOLD).fontSize(BODY_SIZE);
    COLUMNS.forEach((column, i) => sheet.put(column.title, this.x(i), sheet.y, column.align));
    sheet.y += LINE + 2;
    sheet.rule(sheet.y - 4, 1);
    sheet.doc.font(FONT).fontSize(BODY_SIZE);
  }

  private nextPage(): void {
    this.sheet.doc.addPage();
    this.sheet.y = MARGIN;
    this.header();
  }

  /** One line item, its cells already wrapped, and the rule under it. */
  row(wrapped: string[][]): void {
    const { sheet } = this;
    const height = Math.max(...wrapped.map((lines) => lines.length));
    let start = 0;
    while (start < height) {
      const fit = Math.floor((sheet.bottom() - sheet.y) / LINE);
      const rest = height - start;
      // A row that fits on a fresh page is never split; a taller one fills the page and goes on.
      if (rest > fit && (rest <= this.freshPageLines || fit < 1)) {
        this.nextPage();
        continue;
      }
      const take = Math.min(rest, fit);
      wrapped.forEach((lines, i) => {
        lines.slice(start, start + take).forEach((line, n) => sheet.put(line, this.x(i), sheet.y + n * LINE, COLUMNS[i]!.align));
      });
      start += take;
      sheet.y += take * LINE;
      if (start < height) this.nextPage();
    }
    sheet.y += 3;
    sheet.rule(sheet.y - 2);
  }
}

// ------------------------------------------------------------------ totals

/** Subtotal, discount (when there is one), tax, total and amount due, right-aligned. */
function drawTotals(sheet: Sheet, invoice: Json, money: Money): void {
  const totals: Array<[string, string, boolean]> = [
    ['Subtotal', money(invoice.subTotal), false],
    ...(num(invoice.totalDiscount) ? [['Discount', money(invoice.totalDiscount), false] as [string, string, boolean]] : []),
    ['Tax', money(invoice.totalTaxAmount), false],
    ['Total', money(invoice.totalAmount), true],
    ['Amount due', money(invoice.amountDue), true],
  ];
  sheet.y += 10;
  sheet.doc.fontSize(10);
  sheet.room(totals.length * 15);
  const labelX = sheet.right - 230;
  for (const [label, value, strong] of totals) {
    sheet.doc.font(strong ? BOLD : FONT);
    sheet.put(label, labelX, sheet.y);
    sheet.put(value, sheet.right, sheet.y, 'right');
    sheet.y += 15;
  }
}

function drawNote(sheet: Sheet, note: string | undefined): void {
  if (!note) return;
  sheet.y += 12;
  sheet.doc.font(BOLD).fontSize(BODY_SIZE);
  sheet.room(2 * LINE);
  sheet.put('Note', sheet.left, sheet.y);
  sheet.y += LINE;
  sheet.doc.font(FONT);
  sheet.paragraph(note, LINE);
}

// ------------------------------------------------------------------ footers

/** 'Invoice N · page i of n' at the foot of every page. */
function drawFooters(sheet: Sheet, number: string): void {
  const { doc } = sheet;
  const { start, count } = doc.bufferedPageRange();
  doc.font(FONT).fontSize(8).fillColor('#666666');
  for (let i = start; i < start + count; i++) {
    doc.switchToPage(i);
    // Below the bottom margin pdfkit would start a new page; the footer is placed by hand.
    doc.page.margins.bottom = 0;
    const shortNumber = number.length > 60 ? `${number.slice(0, 59)}…` : number;
    sheet.put(`Invoice ${shortNumber} · page ${i - start + 1} of ${count}`, sheet.right, doc.page.height - MARGIN, 'right');
  }
}
