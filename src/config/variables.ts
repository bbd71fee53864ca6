// The environment variables of Linkplane's processes and of the operator, with what each means: the one source of
// the tables of docs/configuration.md, which scripts/config-docs.ts writes (`npm run docs:config`). The defaults
// shown there are not written here but taken from the loaders themselves (config.ts and operator.ts tell each
// default as they read the variable); `default` below is only for a default that depends on other variables or on
// the machine. test/unit/config-docs.test.ts fails when a variable the loaders read is missing here, when one
// listed here is no longer read, and when docs/configuration.md is not what the script writes.

export interface EnvVariable {
  /** The variables of one row, documented together. */
  names: readonly string[];
  /** The first cell when it says more than the names (`A` or `B`). */
  label?: string;
  /** The default as words, for a default computed from other variables or the machine; else the loader's own. */
  default?: string;
  /** What it does (Markdown). */
  meaning: string;
}

export type EnvSection = 'processes' | 'webhooks' | 'operator';

export const ENV_VARIABLES: Record<EnvSection, readonly EnvVariable[]> = {
  processes: [
    { names: ["MONGODB_URI"], default: "none (all-in-one: embedded devdb)", meaning: "required for `api`, `redirect`, `worker`" },
    { names: ["MONGODB_DB"], meaning: "database name" },
    { names: ["NATS_URL"], meaning: "NATS with JetStream: one server or a comma-separated list of a cluster's servers (a process starts while some are down); a clear message and exit 1 when none is reachable" },
    { names: ["NATS_PREFIX"], meaning: "prefix of stream and subject names (lets installations or test runs share a server)" },
    { names: ["NATS_DUPLICATE_WINDOW_MS"], meaning: "JetStream duplicate window of the streams (outbox de-duplication)" },
    { names: ["NATS_REPLICAS"], default: "three when the cluster has three or more nodes, else one", meaning: "copies JetStream keeps of every stream (1–5; consumers follow); existing streams are brought to it at start. See [Scaling](scaling.md)" },
    { names: ["HOST"], meaning: "listen address" },
    { names: ["API_PORT", "REDIRECT_PORT", "WORKER_PORT"], meaning: "" },
    { names: ["PUBLIC_API_URL"], meaning: "public origin of the API (the API is at `/v1` below it)" },
    { names: ["DOCS_BASE_URL"], default: "`$PUBLIC_API_URL/docs`", meaning: "where `doc_url` of errors points (`/docs/errors#<code>` is served by the api)" },
    { names: ["SHORT_LINK_BASE_URL"], meaning: "base of short URLs on the default domain" },
    { names: ["DEFAULT_SHORT_DOMAIN"], default: "host of `SHORT_LINK_BASE_URL`", meaning: "the default short domain" },
    { names: ["SECRET_KEY"], default: "development value (required in production, ≥ 32 characters)", meaning: "signs click ids and visitor cookies" },
    { names: ["NODE_ENV"], meaning: "`development`, `production` or `test`; in `production` a missing `SECRET_KEY` stops the process" },
    { names: ["LOG_LEVEL"], meaning: "`fatal` … `trace`, `silent`" },
    { names: ["CLICK_SPOOL_DIR"], default: "`$TMPDIR/linkplane-click-spool`", meaning: "redirect: where clicks beyond `CLICK_BUFFER_MAX` wait on local disk while NATS is unreachable, replayed when it returns; `none`: no spool (they are dropped and counted)" },
    { names: ["CLICK_SPOOL_MAX_MB"], meaning: "redirect: the most the spool may fill; beyond it clicks are dropped, logged and counted" },
    { names: ["LOG_BUFFER_MAX_BYTES"], meaning: "log bytes held while stdout is not read (64 KiB to 1 GiB); beyond, lines are dropped and counted" },
    { names: ["BODY_LIMIT_BYTES"], meaning: "larger request bodies get 413 `invalid_request`" },
    { names: ["RATE_LIMIT_WORKSPACE_PER_MIN", "RATE_LIMIT_PARTNER_PER_MIN"], meaning: "default per-key limits (plans may override)" },
    { names: ["IDEMPOTENCY_TTL_HOURS"], meaning: "retention of `Idempotency-Key` answers" },
    { names: ["KEY_CACHE_TTL_MS"], meaning: "in-process API key cache (revocations are also broadcast at once)" },
    { names: ["OUTBOX_POLL_MS"], meaning: "outbox relay poll interval" },
    { names: ["SHUTDOWN_TIMEOUT_MS"], meaning: "how long in-flight requests may take at shutdown" },
    { names: ["HTTP_REQUEST_TIMEOUT_MS"], meaning: "how long a client may take to send a whole request; then 408 `invalid_request` (a request head over 16 KiB: 431), in the error envelope" },
    { names: ["DEVDB_PORT", "DEVDB_DATA_DIR"], default: "27017, `.data/devdb`", meaning: "the all-in-one's embedded database" },
    { names: ["DEVDB_YOUNG_GENERATION_MB"], meaning: "the young generation of devdb's thread in the all-in-one: short-lived objects of click ingestion die there instead of filling the old generation (on 2.5 M stored clicks, one run each: 3,845 instead of 3,410 clicks ingested/s, 14.9k instead of 10.9k redirects/s under load, 300 MB more RSS)" },
    { names: ["DEVDB_CACHE_MB"], meaning: "the all-in-one's embedded database keeps stored documents in its journal file, not in memory, and reads them back when a query needs them: this many MiB of the documents read or written lately stay in memory (0: none, each read goes to the file, which the operating system caches)" },
    { names: ["REDIRECT_CACHE_TTL_MS", "REDIRECT_NEGATIVE_CACHE_TTL_MS", "REDIRECT_CACHE_MAX_ENTRIES"], meaning: "redirect caches (changes are broadcast; the TTL is a safety net) and how long \"no such link\" is remembered" },
    { names: ["GEOIP_CITY_DB", "GEOIP_ASN_DB", "GEOIP_ANONYMOUS_DB"], meaning: "MaxMind-format databases (GeoIP2/GeoLite2 City, ASN, Anonymous IP); a configured one takes precedence over the open data of its kind ([Geography](geography.md))" },
    { names: ["GEOIP_OPEN_DATA"], meaning: "without `GEOIP_CITY_DB` / `GEOIP_ASN_DB`, place visitors by country and ASN with the openly licensed data shipped as dependencies (NRO, RouteViews, DB-IP; CC0 and CC BY 4.0, see [Geography](geography.md) for the attribution); `false` turns it off" },
    { names: ["TRUST_EDGE_HEADERS"], meaning: "believe CDN headers (`CF-IPCountry`, `CloudFront-Viewer-*`, `X-Geo-*`, `X-Proxy-Type`, `X-Verified-Bot`)" },
    { names: ["TRUSTED_PROXY_HOPS"], meaning: "proxies appending to `X-Forwarded-For` in front of the redirect (0: the socket address)" },
    { names: ["IP_STORAGE"], meaning: "how a click keeps the visitor IP: `truncate` (/24, /48), `hash` (keyed, salt changes daily) or `none`" },
    { names: ["PASSWORD_COOKIE_TTL_S", "PASSWORD_MAX_ATTEMPTS", "PASSWORD_ATTEMPT_WINDOW_MS"], meaning: "password links" },
    { names: ["CLICK_BUFFER_MAX"], meaning: "clicks held in memory while NATS is away (beyond it the oldest are dropped, and counted)" },
    { names: ["COUNTER_REFRESH_MS"], meaning: "how often the redirect re-reads rotator click counts and destination health" },
    { names: ["REDIRECT_ACCESS_LOG_CLICKS"], meaning: "also log visits recorded as clicks (successful `GET`s: their click on `CLICKS` is their record); errors, 4xx, `POST` and `HEAD` are always logged" },
    { names: ["CLICK_BATCH_SIZE", "CLICK_BATCH_WAIT_MS", "ROTATOR_HEALTH_INTERVAL_MS"], meaning: "worker: click ingestion batches (a batch is as many clicks as arrived within the wait, up to the size, worked out a slice at a time; a larger batch shares rollup parts across more clicks: in `bench -- analytics` the rollups' share of ingestion was 0.28-0.30 at 10,000 against 0.36-0.47 at 5,000 in one run, 0.34-0.44 at 10,000 in a later one, and the all-in-one stored every click answered, caught up 2-6 s after a minute of load), destination health checks" },
    { names: ["LINK_PREVIEW_INTERVAL_MS", "LINK_PREVIEW_REFRESH_MS"], meaning: "worker: how often it looks for links whose destination's social card (Open Graph tags) is due, and how long a card read is kept before it is read again (a failed read is tried again after at most an hour)" },
    { names: ["LINK_PREVIEW_TIMEOUT_MS", "LINK_PREVIEW_MAX_KB"], meaning: "worker: time for reading one destination's page, redirects included (at most 4 hops, each through the SSRF guard: private addresses only with `WEBHOOK_ALLOW_PRIVATE_TARGETS`), and the bytes of it read (the tags are in its head)" },
    { names: ["WEBHOOK_CLICK_BATCH_SIZE", "WEBHOOK_CLICK_BATCH_WAIT_MS"], meaning: "worker: `link.clicked` deliveries carry at most this many clicks each, and leave at the latest this long after the first click of the batch arrived (see docs/webhooks.md)" },
    { names: ["CLICK_ACK_WAIT_MS"], meaning: "how long a click batch may be held before JetStream redelivers it (a dead worker's batch waits this long)" },
    { names: ["CLICK_RETENTION_DAYS"], meaning: "raw clicks expire after the plan's raw click retention, at most this (analytics rollups are kept)" },
    { names: ["ANALYTICS_ROLLUPS"], meaning: "count clicks into the analytics rollups (off only to measure their cost; `linkplane analytics rebuild` catches up)" },
    { names: ["ANALYTICS_SETTLE_INTERVAL_MS"], meaning: "worker: how often the parts of rollup buckets that ended (5 minutes ago or more) are merged into one each" },
    { names: ["ANALYTICS_EXPORTS_PER_WORKSPACE"], meaning: "CSV exports of a workspace running at once, across API pods" },
    { names: ["LINK_EXPORTS_PER_WORKSPACE"], meaning: "links exports (`GET /v1/links/export`) of a workspace running at once, across API pods; one more answers 429 `rate_limited` with `Retry-After`" },
    { names: ["ANALYTICS_PART_CACHE_MB"], meaning: "api: bytes of analytics rollup parts (7/8) and of unique-visitor estimates worked out from them (1/8) kept from one query to the next (least recently used out first; 0 turns both off)" },
    { names: ["DOMAINS_KUBE"], default: "`kubeconfig` if `KUBECONFIG` is set, `in-cluster` in a pod (`KUBERNETES_SERVICE_HOST` set), else `off`", meaning: "where the api creates `Domain` objects; `off` without `ACME_DIRECTORY_URL`: connecting a domain answers 503 `not_configured`" },
    { names: ["DOMAIN_NAMESPACE"], default: "`POD_NAMESPACE` or `linkplane`", meaning: "namespace of `Domain` objects" },
    { names: ["DOMAIN_CNAME_TARGET", "DOMAIN_A_TARGETS", "DOMAIN_TXT_PREFIX"], meaning: "the DNS records customers are told to set (same values as the operator's; with `ACME_DIRECTORY_URL` also what the worker checks)" },
    { names: ["ACME_DIRECTORY_URL"], meaning: "custom domains without Kubernetes ([Custom domains with TLS](custom-domains-tls.md)): the ACME directory the worker obtains certificates from (`https://acme-v02.api.letsencrypt.org/directory`); set, `POST /domains` no longer answers 503 and `DOMAINS_KUBE` must be `off`" },
    { names: ["ACME_CONTACT_EMAIL"], meaning: "the contact address of the ACME account (expiry notices from CAs that send them)" },
    { names: ["ACME_CA_FILE"], meaning: "a PEM bundle trusted, besides the system roots, for the ACME directory's HTTPS (a test CA such as Pebble's)" },
    { names: ["TLS_PORT"], meaning: "redirect: the HTTPS port serving custom domains by SNI with the certificates in the database (needs `ACME_DIRECTORY_URL`); the CA's HTTP-01 requests reach `REDIRECT_PORT` (port 80 in front of it)" },
    { names: ["TLS_SWEEP_INTERVAL_MS"], meaning: "worker: how often pending domains are checked (each on the `DNS_CHECK_BACKOFF` schedule) and certificates due are ordered or renewed" },
    { names: ["TLS_ISSUANCE_BACKOFF"], meaning: "worker: delays before retrying a failed certificate order or renewal, the last repeating (a CA limits failed validations: Let's Encrypt allows 5 an hour per hostname)" },
    { names: ["TLS_RENEW_AT_PERCENT"], meaning: "worker: a certificate is renewed once this part of its lifetime has passed (10 to 95; a 90-day certificate at day 60)" },
    { names: ["DNS_RESOLVERS", "DNS_CHECK_BACKOFF", "DNS_GIVE_UP_AFTER"], default: "system resolvers, `10s,30s,1m,5m,15m`, `72h`", meaning: "worker, with `ACME_DIRECTORY_URL`: the DNS check of a connected domain, as the operator's below" },
    { names: ["CONVERSION_CLICK_WAIT_MS"], meaning: "how long `POST /conversions` waits for a click the ingestion has not written yet (then 504 `internal` with `Retry-After`)" },
    { names: ["LINK_BLOCKLIST_HOSTS", "LINK_BLOCKLIST_FILE"], meaning: "link safety: hostnames (comma-separated; each blocks its subdomains too) and a file of entries refused as destinations (see [Link safety](api-guide.md#link-safety))" },
    { names: ["PARTNER_CLIENT_QUOTA"], meaning: "client workspaces a partner may hold (a partner record may set its own); beyond it 422 `quota_exceeded`" },
    { names: ["PARTNER_PLATFORM_FEE_BPS"], meaning: "the platform's fee on each client payment, in basis points of the gross, rounded down" },
    { names: ["BILLING_GRACE_DAY_MS"], meaning: "the length of one day of a partner's grace period (tests and demos compress it)" },
    { names: ["BILLING_SWEEP_INTERVAL_MS"], meaning: "how often the worker suspends clients whose grace ran out and computes payouts of closed periods" },
    { names: ["BILLING_INGEST_REFUSED_PER_MIN_PER_IP"], meaning: "refused posts to the Stripe ingestion URL (bad signature, empty body, unknown or unconfigured partner) one source address may make per minute before refusals answer 429 ([details](billing-ingestion.md))" },
    { names: ["BILLING_INGEST_REFUSED_PER_MIN_PER_PARTNER"], meaning: "the same, per partner id in the path, from any address" },
    { names: ["REPORT_RATE_LIMIT_PER_MIN"], meaning: "abuse reports one address may file per minute (the form and `POST /v1/public/reports` together)" },
    { names: ["ALERT_EVAL_INTERVAL_MS"], meaning: "how often the worker evaluates alert rules (one replica at a time, by lease)" },
    { names: ["IMPORT_POLL_MS"], meaning: "how often the worker looks for import jobs to run (queued ones, and running ones whose worker died); see [Importing](importing/README.md)" },
    { names: ["IMPORT_LEASE_MS"], meaning: "the lease a worker holds on a running import job, renewed between pages: a dead worker's job is resumed by another at most this long after its last page" },
    { names: ["IMPORT_ALLOW_PRIVATE_SOURCES"], meaning: "let import jobs call services on loopback, private or link-local addresses (a self-hosted Shlink, Kutt or YOURLS on the same network)" },
    { names: ["DASHBOARD_DIR"], default: "`<checkout>/web/dist`", meaning: "the dashboard build the api serves under `/dashboard/`" },
    { names: ["SESSION_IDLE_TIMEOUT_MS", "SESSION_MAX_AGE_MS"], meaning: "a dashboard session ends unused after 12 h, and after 30 days at most" },
    { names: ["SIGN_IN_MAX_ATTEMPTS", "SIGN_IN_MAX_ATTEMPTS_PER_IP", "SIGN_IN_MAX_ATTEMPTS_PER_ACCOUNT", "SIGN_IN_ATTEMPT_WINDOW_MS"], meaning: "dashboard sign-in attempts in the window before 429 (with when it lifts): per account and client address together, per address across accounts (behind `TRUSTED_PROXY_HOPS`), and per account from all addresses (the ceiling on distributed guessing); see [Dashboard](dashboard.md#signing-in)" },
    { names: ["PASSWORD_RESET_TTL_MS", "PASSWORD_RESETS_PER_ACCOUNT", "PASSWORD_RESETS_PER_IP"], meaning: "how long an e-mailed password reset link works (30 min), and reset e-mails per account (then silently none) and per client address (then 429) an hour" },
    { names: ["SIGN_IN_LINK_TTL_MS", "INVITE_TTL_MS"], meaning: "how long an e-mailed sign-in link (15 min) and an invitation (7 days) work" },
    { names: ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET", "OIDC_NAME"], default: "none (`OIDC_NAME`: `single sign-on`)", meaning: "OpenID Connect sign-in to the dashboard (see [Dashboard](dashboard.md#openid-connect))" },
    { names: ["OAUTH_ACCESS_TOKEN_TTL_SECONDS", "OAUTH_REFRESH_TOKEN_TTL_SECONDS"], meaning: "how long an access token and a refresh token of an app authorised by OAuth live (an MCP host that connected by URL, see [MCP hosts connecting by URL](mcp.md#connecting-by-url-oauth)); a refresh is answered a new refresh token, the old one stops working" },
  ],
  webhooks: [
    { names: ["WEBHOOK_ALLOW_PRIVATE_TARGETS"], meaning: "accept endpoint URLs resolving to loopback, private or link-local addresses" },
    { names: ["WEBHOOK_SECRET_GRACE_HOURS"], meaning: "how long the previous secret keeps signing after a rotation (0 to 720; 0: not at all)" },
    { names: ["WEBHOOK_RETRY_SCHEDULE"], meaning: "delay before each retry (1 to 10 entries, units `ms` `s` `m` `h`, each at least 1 ms); its length is the number of retries" },
    { names: ["WEBHOOK_TIMEOUT_MS"], meaning: "how long a receiver has to answer a delivery" },
    { names: ["WEBHOOK_ACK_WAIT_MS"], default: "`WEBHOOK_TIMEOUT_MS` + 20000", meaning: "JetStream ack_wait of the delivery consumer: how long before a delivery held by a dead worker goes to another (at least `WEBHOOK_TIMEOUT_MS` + 1000)" },
    { names: ["SMTP_URL"], meaning: "`smtp://user:pass@host:587` or `smtps://user:pass@host:465`; unset: no e-mail is sent (a warning is logged instead)" },
    { names: ["MAIL_FROM"], meaning: "the sender of the failing-endpoint e-mail" },
  ],
  operator: [
    { names: ["POD_NAME"], default: "host name", meaning: "identity in the Lease" },
    { names: ["OPERATOR_NAMESPACE", "POD_NAMESPACE"], label: "`OPERATOR_NAMESPACE` or `POD_NAMESPACE`", default: "required", meaning: "the namespace watched (and of the Lease)" },
    { names: ["KUBECONFIG"], default: "in-cluster service account", meaning: "" },
    { names: ["NATS_URL", "NATS_PREFIX"], default: "as above", meaning: "where `DOMAINS` messages go" },
    { names: ["NATS_DUPLICATE_WINDOW_MS", "HOST", "LOG_LEVEL"], default: "as above (`HOST`: `0.0.0.0`)", meaning: "as for the other processes" },
    { names: ["CERT_ISSUER_NAME", "CERT_ISSUER_KIND"], meaning: "issuer of Certificates (a Domain's `spec.issuerRef` wins)" },
    { names: ["INGRESS_CLASS"], meaning: "`ingressClassName` of the routes" },
    { names: ["INGRESS_SERVICE_NAME", "INGRESS_SERVICE_PORT"], default: "required, `8081`", meaning: "the redirect Service the routes point to" },
    { names: ["DNS_RESOLVERS"], default: "system resolvers", meaning: "comma list of `ip` or `ip:port`" },
    { names: ["DNS_CHECK_BACKOFF"], meaning: "delays between DNS checks; the last repeats" },
    { names: ["DNS_GIVE_UP_AFTER"], meaning: "from the first check of a generation to `Error`" },
    { names: ["DOMAIN_CNAME_TARGET", "DOMAIN_A_TARGETS", "DOMAIN_TXT_PREFIX"], meaning: "what customers point at (one target at least)" },
    { names: ["LEASE_NAME", "LEASE_DURATION_MS", "LEASE_RENEW_MS"], meaning: "leader election" },
    { names: ["OPERATOR_METRICS_PORT"], meaning: "health and metrics" },
  ],
};
