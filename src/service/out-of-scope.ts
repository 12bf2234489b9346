// Routes of the public API that older clients still call and ferry does not serve: company
// groups, and the lending, expenses and bank-feeds products (their SDKs reach them through
// the same companies and connections). Their 404 names the route as outside ferry's scope
// rather than as unknown, so a client's author knows not to look for a fix on their side.
// docs/api.md lists them.

/** Path patterns (path words in any case, as the router matches them) and the product each belongs to. */
const FAMILIES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/groups(\/|$)/i, 'company groups'],
  [/^\/companies\/[^/]+\/groups(\/|$)/i, 'company groups'],
  [/^\/companies\/[^/]+\/sync\/expenses(\/|$)/i, 'the expenses product'],
  [/^\/companies\/[^/]+\/reports(\/|$)/i, 'the lending product (reports)'],
  [/^\/companies\/[^/]+\/data\/financials(\/|$)/i, 'the lending product (financial statements)'],
  [/^\/data\/companies(\/|$)/i, 'the lending product (assess)'],
  [/^\/companies\/[^/]+\/files(\/|$)/i, 'the lending product (files)'],
  [/^\/companies\/[^/]+\/connections\/[^/]+\/files(\/|$)/i, 'the lending product (files)'],
  [/^\/companies\/[^/]+\/connections\/[^/]+\/bankStatements(\/|$)/i, 'the lending product (bank statements)'],
  [/^\/companies\/[^/]+\/connections\/[^/]+\/data\/(banking|commerce)-/i, 'the lending product (banking and commerce data)'],
  [/^\/companies\/[^/]+\/connections\/[^/]+\/(bankFeedAccounts|connectionInfo\/bankFeedAccounts)(\/|$)/i, 'the bank feeds product'],
  [/^\/companies\/[^/]+\/connections\/[^/]+\/(data|push|options)\/bankAccounts\/[^/]+\/bankTransactions(\/|$)/i, 'the bank feeds product (bank transactions)'],
];

/** The product outside ferry's scope that a path belongs to, if it is one of theirs. */
export function outOfScopeProduct(path: string): string | undefined {
  return FAMILIES.find(([pattern]) => pattern.test(path))?.[1];
}
