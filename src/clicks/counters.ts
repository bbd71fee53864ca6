// What the rotator needs to honour `max_total_clicks`, `max_daily_clicks` and `auto_disable_unhealthy` without any
// I/O on the request path: a snapshot of the ingested counts and of destination health for the links in use,
// re-read every `refreshMs`, plus this pod's own clicks since the snapshot was taken. The clicks in transit (not
// yet ingested) are the only ones missed, so a pod overshoots a limit by at most about one refresh period of its own
// traffic.
import type { Logger } from '../platform/logger.ts';
import type { ClickStore, DestinationCount } from './click.store.ts';
import { utcDay } from './click.store.ts';
import type { RotatorHealthStore } from './rotator-health.store.ts';

export interface RotatorCountersOptions {
  clicks: ClickStore;
  health: RotatorHealthStore;
  /** config.redirect.counterRefreshMs */
  refreshMs: number;
  logger: Logger;
  /** A link not served for this long is no longer refreshed. */
  forgetAfterMs?: number;
  now?: () => number;
}

const EMPTY: ReadonlySet<string> = new Set();
const DAY_MS = 86_400_000;

export class RotatorCounters {
  private readonly o: RotatorCountersOptions;
  private readonly now: () => number;
  /** Link id → when it was last asked for. */
  private readonly watched = new Map<string, number>();
  private snapshot = new Map<string, Map<string, DestinationCount>>();
  private unhealthyByLink = new Map<string, Set<string>>();
  /** The UTC day the snapshot's `today` figures belong to ends at this instant. */
  private dayEndsAt = 0;
  /** `<link id>\n<destination id>` → this pod's clicks since the snapshot; `today` is for the day ending at `localDayEndsAt`. */
  private local = new Map<string, DestinationCount>();
  private localDayEndsAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private refreshSoon = false;
  private failing = false;

  constructor(options: RotatorCountersOptions) {
    this.o = options;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.refresh(), this.o.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Declares that a link with rotator limits or health checks is being served; a new one is read shortly. */
  watch(linkId: string): void {
    const known = this.watched.has(linkId);
    this.watched.set(linkId, this.now());
    if (!known && !this.refreshSoon) {
      this.refreshSoon = true;
      setImmediate(() => {
        this.refreshSoon = false;
        void this.refresh();
      });
    }
  }

  /** This pod sent a visitor to the destination: counted until the next snapshot includes it. */
  add(linkId: string, destinationId: string): void {
    const now = this.now();
    if (now >= this.localDayEndsAt) {
      // A new UTC day: yesterday's local clicks still count towards totals, not towards today.
      for (const entry of this.local.values()) entry.today = 0;
      this.localDayEndsAt = dayEnd(now);
    }
    const key = `${linkId}\n${destinationId}`;
    const entry = this.local.get(key);
    if (entry) {
      entry.total++;
      entry.today++;
    } else this.local.set(key, { total: 1, today: 1 });
  }

  counts(linkId: string, destinationId: string): DestinationCount {
    const stored = this.snapshot.get(linkId)?.get(destinationId);
    const mine = this.local.get(`${linkId}\n${destinationId}`);
    const now = this.now();
    const storedToday = stored && now < this.dayEndsAt ? stored.today : 0;
    const mineToday = mine && now < this.localDayEndsAt ? mine.today : 0;
    return { total: (stored?.total ?? 0) + (mine?.total ?? 0), today: storedToday + mineToday };
  }

  /** Destination ids the health checker marked unhealthy. */
  unhealthy(linkId: string): ReadonlySet<string> {
    return this.unhealthyByLink.get(linkId) ?? EMPTY;
  }

  /** Re-reads counts and health for the watched links (one at a time: a refresh in progress is joined). */
  refresh(): Promise<void> {
    this.refreshing ??= this.read().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async read(): Promise<void> {
    const now = this.now();
    const forgetBefore = now - (this.o.forgetAfterMs ?? 10 * 60_000);
    for (const [linkId, seen] of this.watched) if (seen < forgetBefore) this.watched.delete(linkId);
    const linkIds = [...this.watched.keys()];
    // Clicks from here on are not in what is about to be read; the ones before it will be, once ingested.
    const previousLocal = this.local;
    const previousLocalDayEnd = this.localDayEndsAt;
    this.local = new Map();
    try {
      const [counts, unhealthy] = await Promise.all([this.o.clicks.destinationCounts(linkIds, utcDay(new Date(now))), this.o.health.unhealthy(linkIds)]);
      this.snapshot = counts;
      this.unhealthyByLink = unhealthy;
      this.dayEndsAt = dayEnd(now);
      if (this.failing) this.o.logger.info('rotator counters refreshed again');
      this.failing = false;
    } catch (error) {
      // Keep the old snapshot and every click counted locally since it was taken.
      const dayMoved = this.local.size > 0 && this.localDayEndsAt !== previousLocalDayEnd;
      for (const [key, recent] of this.local) {
        const entry = previousLocal.get(key) ?? { total: 0, today: 0 };
        if (dayMoved) entry.today = 0;
        entry.total += recent.total;
        entry.today += recent.today;
        previousLocal.set(key, entry);
      }
      if (dayMoved) for (const [key, entry] of previousLocal) if (!this.local.has(key)) entry.today = 0;
      this.local = previousLocal;
      this.localDayEndsAt = Math.max(this.localDayEndsAt, previousLocalDayEnd);
      if (!this.failing) this.o.logger.warn({ err: error }, 'rotator counters not refreshed; using the previous snapshot');
      this.failing = true;
    }
  }
}

function dayEnd(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;
}
