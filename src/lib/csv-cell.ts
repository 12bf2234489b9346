// Spreadsheets run a cell that starts with =, +, -, @, tab or CR as a formula: a company
// named =HYPERLINK(…) would become a live link in whoever opens ferry's CSV. Such text
// cells get a leading apostrophe (shown as text, the apostrophe hidden); plain numbers,
// such as -12.50, are left as they are.
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}
