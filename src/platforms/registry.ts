// The integrations ferry emulates. Keys are the public API's real platform keys, so
// code and CSV files written for the public API work unchanged. Token fields are what
// each platform's own API needs, named in camelCase, and never one of the bulk CSV's
// own columns (companyName, companyId, platformKey, externalId, ...), because both
// share one header row.

import { createHash } from 'node:crypto';
import { DATA_TYPES } from './data-types.js';
import type { DataTypeKey } from './data-types.js';
import type { Integration, TokenField } from './types.js';

function field(name: string, description: string, example: string, required = true): TokenField {
  return { name, required, description, example };
}

/** The access/refresh pair of an OAuth 2.0 authorization-code grant. */
function oauth(platform: string, tag: string): TokenField[] {
  return [
    field('accessToken', `access_token from the latest ${platform} OAuth 2.0 token response your app stored`, `at_example_${tag}_7f3a9c`),
    field('refreshToken', `refresh_token from that same ${platform} token response`, `rt_example_${tag}_2b8e41`),
  ];
}

function expiresAt(platform: string): TokenField {
  return field(
    'expiresAt',
    `When the ${platform} access token expires, ISO 8601 UTC (issue time + expires_in); leave empty if unknown`,
    '2026-11-21T11:00:00Z',
    false,
  );
}

/** Keeps each list in registry order and lets the compiler catch a misspelt key. */
function supports(...keys: DataTypeKey[]): string[] {
  const wanted = new Set<string>(keys);
  return DATA_TYPES.filter((t) => wanted.has(t.key)).map((t) => t.key);
}

// What almost every accounting platform offers; the rest vary by platform.
const CORE: DataTypeKey[] = [
  'invoices', 'bills', 'customers', 'suppliers', 'chartOfAccounts',
  'payments', 'billPayments', 'creditNotes', 'taxRates', 'company',
];
const ALL = DATA_TYPES.map((t) => t.key);

const EXAMPLE_UUID = '00000000-0000-4000-8000-00000000e001';

export const INTEGRATIONS: readonly Integration[] = [
  {
    key: 'qkdj', name: 'Amazon Seller Central', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      field('sellingPartnerId', 'Seller id (selling_partner_id) passed to your app when the seller authorized it', 'A1EXAMPLE0SELLER'),
      field('refreshToken', 'Login with Amazon refresh token (Atzr|...) your app stored for the seller', 'Atzr|rt_example_amzn_5c19d0'),
      field('marketplaceId', 'Marketplace the seller trades in, from getMarketplaceParticipations (e.g. A1F83G8C2ARO7P for the UK)', 'A1F83G8C2ARO7P'),
    ],
    dataTypes: supports('items', 'payments', 'company'),
  },
  {
    key: 'vqzp', name: 'BigCommerce', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      field('storeHash', 'Store hash from the context (stores/{hash}) returned when the store installed your app', 'example1hash'),
      field('accessToken', 'access_token returned by BigCommerce when the store installed your app (it does not expire)', 'at_example_bigc_3e0d52'),
    ],
    dataTypes: supports('customers', 'items', 'payments', 'taxRates', 'company'),
  },
  {
    key: 'xwsy', name: 'Chargebee', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      field('site', 'Chargebee site name, the first part of https://{site}.chargebee.com', 'example-test'),
      field('apiKey', 'Read-only full-access API key from Settings > Configure Chargebee > API keys', 'live_example_cb_91a7f0'),
    ],
    dataTypes: supports('invoices', 'customers', 'payments', 'creditNotes', 'items', 'taxRates', 'company'),
  },
  {
    key: 'jhch', name: 'Clear Books', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Clear Books', 'clrb'),
      field('businessId', 'Business id from GET /businesses with the access token', '100001'),
      expiresAt('Clear Books'),
    ],
    // Deliberately lacks journalEntries and items.
    dataTypes: supports(...CORE, 'bankAccounts'),
  },
  {
    key: 'trji', name: 'Dynamics 365 Business Central', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Microsoft identity platform', 'd365'),
      field('tenantId', 'Microsoft Entra (Azure AD) tenant id of the customer, from the token\'s tid claim', EXAMPLE_UUID),
      field('environmentName', 'Business Central environment name, as in the admin center (e.g. Production)', 'Production'),
      field('bcCompanyId', 'Company id from GET /api/v2.0/companies in that environment', '00000000-0000-4000-8000-00000000bc01'),
      expiresAt('Microsoft'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'trackingCategories', 'billCreditNotes', 'journals', 'paymentMethods', 'salesOrders'),
  },
  {
    key: 'qudb', name: 'Exact (Netherlands)', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Exact Online (start.exactonline.nl)', 'exnl'),
      field('division', 'Division number, CurrentDivision from GET /api/v1/current/Me', '1234567'),
      expiresAt('Exact Online'),
    ],
    // Exact books every entry to one of several journals.
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'trackingCategories', 'billCreditNotes', 'journals', 'salesOrders'),
  },
  {
    key: 'pbbf', name: 'Exact (UK)', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Exact Online (start.exactonline.co.uk)', 'exuk'),
      field('division', 'Division number, CurrentDivision from GET /api/v1/current/Me', '7654321'),
      expiresAt('Exact Online'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'trackingCategories', 'billCreditNotes', 'journals', 'salesOrders'),
  },
  {
    key: 'fbrh', name: 'FreeAgent', sourceType: 'Accounting', migrationRoute: 'managed',
    // FreeAgent tokens are bound to one company, so there is no organisation id.
    tokenFields: [...oauth('FreeAgent', 'frag'), expiresAt('FreeAgent')],
    dataTypes: supports(...CORE, 'journalEntries', 'bankAccounts', 'accountTransactions', 'transfers'),
  },
  {
    key: 'vxvy', name: 'FreshBooks', sourceType: 'Accounting', migrationRoute: 'managed',
    tokenFields: [
      ...oauth('FreshBooks', 'frbk'),
      field('accountId', 'Accounting account_id from GET /auth/api/v1/users/me (business_memberships)', 'xZNQ1X'),
      field('businessId', 'Business id from the same response, needed for projects and time tracking', '2000001', false),
      expiresAt('FreshBooks'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts'),
  },
  {
    key: 'wvzu', name: 'KashFlow', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      field('username', 'KashFlow login user name of the account your app connects with', 'example.user'),
      field('password', 'Password of that KashFlow user', 'pw_example_kf_6d20c4'),
      field('memorableWord', 'Memorable word of that user, if the account has one set', 'example-word', false),
    ],
    // Deliberately lacks journalEntries and items.
    dataTypes: supports(...CORE, 'bankAccounts'),
  },
  {
    key: 'pdvj', name: 'MYOB AccountRight Live', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('MYOB', 'myob'),
      field('companyFileId', 'Company file id (Id) from GET https://api.myob.com/accountright/', EXAMPLE_UUID),
      field('companyFileUsername', 'Company file user name (sent as x-myobapi-cftoken)', 'Administrator', false),
      field('companyFilePassword', 'Company file password for that user, if the file has one', 'pw_example_myob_0a4b1e', false),
      expiresAt('MYOB'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'trackingCategories', 'billCreditNotes', 'salesOrders'),
  },
  {
    key: 'akxx', name: 'Oracle NetSuite', sourceType: 'Accounting', migrationRoute: 'self-service',
    // Token-based authentication: the consumer pair comes from the client's own
    // integration record, the token pair from the customer's access token.
    tokenFields: [
      field('accountId', 'NetSuite account id, from Setup > Company > Company Information (e.g. 1234567_SB1)', '1234567_SB1'),
      field('consumerKey', 'Consumer key of your integration record (Setup > Integration > Manage Integrations)', 'ck_example_ns_40f9aa'),
      field('consumerSecret', 'Consumer secret of that integration record', 'cs_example_ns_c27e13'),
      field('tokenId', 'Token id of the customer\'s access token (Setup > Users/Roles > Access Tokens)', 'ti_example_ns_9b5d06'),
      field('tokenSecret', 'Token secret of that access token', 'ts_example_ns_e81f72'),
      field('subsidiaryId', 'Internal id of the subsidiary to sync, for OneWorld accounts', '1', false),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'trackingCategories', 'billCreditNotes', 'journals', 'paymentMethods', 'salesOrders', 'transfers'),
  },
  {
    key: 'vjms', name: 'Pandle', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Pandle', 'pndl'),
      field('pandleCompanyId', 'Pandle company id, from GET /api/v1/companies with the access token', '40001'),
    ],
    // Deliberately lacks billPayments, journalEntries and items.
    dataTypes: supports('invoices', 'bills', 'customers', 'suppliers', 'chartOfAccounts', 'payments', 'creditNotes', 'taxRates', 'company', 'bankAccounts'),
  },
  {
    key: 'gvom', name: 'PayPal', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Log in with PayPal', 'pypl'),
      field('payerId', 'Merchant\'s PayPal payer id, payer_id from GET /v1/identity/oauth2/userinfo', 'EXAMPLEPAYER01'),
    ],
    dataTypes: supports('customers', 'payments', 'company'),
  },
  {
    key: 'suuo', name: 'Plaid', sourceType: 'Banking', migrationRoute: 'self-service',
    tokenFields: [
      field('accessToken', 'access_token from /item/public_token/exchange, stored by your app per Item', 'access-example-plaid-5a0e33'),
      field('itemId', 'item_id returned with that access token', 'item_example_plaid_71c2'),
    ],
    dataTypes: supports('bankAccounts', 'accountTransactions', 'company'),
  },
  {
    key: 'qhyg', name: 'QuickBooks Online', sourceType: 'Accounting', migrationRoute: 'managed',
    tokenFields: [
      ...oauth('Intuit', 'qbo'),
      field('realmId', 'Company id (realmId) passed to your redirect URI when the company connected', '9130350000000001'),
      expiresAt('Intuit'),
      field(
        'refreshTokenExpiresAt',
        'When the refresh token expires, ISO 8601 UTC (issue time + x_refresh_token_expires_in)',
        '2027-03-01T10:00:00Z',
        false,
      ),
    ],
    dataTypes: supports(...ALL),
  },
  {
    key: 'jcrp', name: 'Sage 200cloud', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Sage ID', 's200'),
      field('siteId', 'Site id (X-Site header), from GET /sites with the access token', EXAMPLE_UUID),
      field('sageCompanyId', 'Company id (X-Company header), from that site\'s companies list', '2'),
      expiresAt('Sage ID'),
    ],
    // Deliberately lacks trackingCategories.
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'billCreditNotes', 'salesOrders'),
  },
  {
    key: 'tgff', name: 'Sage Business Cloud Accounting', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Sage', 'sbca'),
      field('businessId', 'Business id (X-Business header), from GET /businesses with the access token', 'example0business0id'),
      expiresAt('Sage'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'directCosts', 'directIncomes', 'billCreditNotes', 'paymentMethods', 'transfers'),
  },
  {
    key: 'knfz', name: 'Sage Intacct', sourceType: 'Accounting', migrationRoute: 'self-service',
    // Web Services: your sender credentials plus the customer's Web Services user.
    tokenFields: [
      field('senderId', 'Your Web Services sender id, from your Intacct developer licence', 'ExampleSender'),
      field('senderPassword', 'Password of that sender id', 'pw_example_sndr_33e1b9'),
      field('intacctCompanyId', 'Customer\'s Intacct company id, as typed on the Intacct sign-in page', 'example-co'),
      field('userId', 'Web Services user the customer created for your app (Company > Web Services users)', 'ws_example_user'),
      field('userPassword', 'Password of that Web Services user', 'pw_example_wsu_8c7d25'),
      field('entityId', 'Entity (location) id to sync, for multi-entity companies', 'US-EAST', false),
    ],
    // Deliberately lacks directCosts and directIncomes.
    // Intacct books every entry to one of several journals.
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'trackingCategories', 'billCreditNotes', 'journals', 'paymentMethods', 'transfers'),
  },
  {
    key: 'mqjo', name: 'Sandbox', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      field('accessToken', 'Any token issued by the sandbox tenant (ferry demo prints them)', 'at_example_sbox_00a1f4'),
      field('tenantId', 'Sandbox tenant id, as listed by the sandbox', EXAMPLE_UUID),
      field('refreshToken', 'Refresh token issued with that access token, if any', 'rt_example_sbox_00b2e5', false),
    ],
    dataTypes: supports(...ALL),
  },
  {
    key: 'fztf', name: 'Shopify', sourceType: 'Commerce', migrationRoute: 'managed',
    tokenFields: [
      field('shopDomain', 'The shop\'s permanent *.myshopify.com domain (the shop parameter at install)', 'example-store.myshopify.com'),
      field('accessToken', 'Offline access_token your app received when the shop installed it', 'at_example_shpf_d40c8a'),
      field('scope', 'Comma-separated scopes granted with that token', 'read_orders,read_products,read_customers', false),
    ],
    dataTypes: supports('customers', 'payments', 'items', 'taxRates', 'company'),
  },
  {
    key: 'zsth', name: 'Square', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Square', 'sqre'),
      field('merchantId', 'merchant_id returned with the Square OAuth token', 'EXAMPLEMERCHANT1'),
      expiresAt('Square'),
    ],
    dataTypes: supports('customers', 'payments', 'items', 'taxRates', 'company'),
  },
  {
    key: 'exgd', name: 'Stripe', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      field('stripeAccountId', 'Connected account id (stripe_user_id, acct_...) from the Stripe Connect OAuth response', 'acct_example0stripe'),
      field('accessToken', 'access_token from that same Stripe Connect OAuth response', 'at_example_strp_6e2b90'),
      field('refreshToken', 'refresh_token from that response, if your platform kept it', 'rt_example_strp_1f7c38', false),
    ],
    dataTypes: supports('customers', 'payments', 'items', 'company'),
  },
  {
    key: 'upvr', name: 'TrueLayer', sourceType: 'Banking', migrationRoute: 'self-service',
    tokenFields: [...oauth('TrueLayer Data API', 'trly'), expiresAt('TrueLayer')],
    dataTypes: supports('bankAccounts', 'accountTransactions', 'company'),
  },
  {
    key: 'pbtz', name: 'Wave', sourceType: 'Accounting', migrationRoute: 'managed',
    tokenFields: [
      ...oauth('Wave', 'wave'),
      field('businessId', 'Business id from the GraphQL businesses query with the access token', 'QnVzaW5lc3M6ZXhhbXBsZQ=='),
      expiresAt('Wave'),
    ],
    // Deliberately lacks billPayments, creditNotes and journalEntries.
    dataTypes: supports('invoices', 'bills', 'customers', 'suppliers', 'chartOfAccounts', 'payments', 'items', 'taxRates', 'company', 'bankAccounts', 'accountTransactions'),
  },
  {
    key: 'ltpp', name: 'WooCommerce', sourceType: 'Commerce', migrationRoute: 'self-service',
    tokenFields: [
      field('storeUrl', 'Base URL of the WordPress site running WooCommerce', 'https://shop.example.com'),
      field('consumerKey', 'REST API consumer key (WooCommerce > Settings > Advanced > REST API)', 'ck_example_woo_5b3a17'),
      field('consumerSecret', 'REST API consumer secret generated with that key', 'cs_example_woo_9e04d2'),
    ],
    dataTypes: supports('customers', 'items', 'payments', 'taxRates', 'company'),
  },
  {
    key: 'gbol', name: 'Xero', sourceType: 'Accounting', migrationRoute: 'self-service',
    tokenFields: [
      ...oauth('Xero', 'xero'),
      field('tenantId', 'Organisation id (tenantId) from GET https://api.xero.com/connections', EXAMPLE_UUID),
      expiresAt('Xero'),
    ],
    dataTypes: supports(...ALL),
  },
  {
    key: 'rwuv', name: 'Zoho Books', sourceType: 'Accounting', migrationRoute: 'managed',
    tokenFields: [
      ...oauth('Zoho Accounts', 'zoho'),
      field('organizationId', 'organization_id from GET /books/v3/organizations', '10234695'),
      field('dataCenter', 'Zoho data centre of the account: com, eu, in, com.au, jp or ca (from api_domain)', 'eu'),
      expiresAt('Zoho'),
    ],
    dataTypes: supports(...CORE, 'journalEntries', 'items', 'bankAccounts', 'purchaseOrders', 'trackingCategories', 'billCreditNotes', 'salesOrders', 'transfers'),
  },
];

const byKey = new Map(INTEGRATIONS.map((i) => [i.key, i]));

/** Exact match on the four-letter platform key. */
export function integrationByKey(key: string): Integration | undefined {
  return byKey.get(key);
}

/**
 * A stable id per platform key: the same on every install and restart, so ids in
 * stored connections and client code never drift. v4-shaped (version and variant
 * bits set) because strict clients validate UUIDs.
 */
export function integrationId(key: string): string {
  const h = createHash('sha256').update(`ferry/integration/${key}`).digest('hex');
  const variant = ((parseInt(h.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
