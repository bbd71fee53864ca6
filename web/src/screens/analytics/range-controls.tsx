import { useMemo, useState } from 'preact/hooks';
import { BOTS, INTERVALS, browserZone, timeZones, type AnalyticsParams } from './analytics-params.ts';

interface RangeControlsProps {
  params: AnalyticsParams;
  /** The zone the last answer was in (the workspace's when none is chosen). */
  answeredZone: string | null;
  onChange: (next: Partial<AnalyticsParams>) => void;
}

/**
 * Range (presets or custom dates), time zone and bots. Presets and the zone apply at once; custom dates apply with
 * their own button, so typing a date does not fire a request per keystroke.
 */
export function RangeControls({ params, answeredZone, onChange }: RangeControlsProps) {
  const zones = useMemo(timeZones, []);
  const custom = params.interval === null;
  const [from, setFrom] = useState(params.from ?? '');
  const [to, setTo] = useState(params.to ?? '');
  const [choosing, setChoosing] = useState(custom);
  const here = browserZone();

  const onInterval = (value: string) => {
    if (value === 'custom') {
      setChoosing(true);
      return;
    }
    setChoosing(false);
    onChange({ interval: value, from: null, to: null });
  };
  const invalid = from !== '' && to !== '' && from > to;

  return (
    <div class="analytics-controls">
      <div class="grid">
        <label>
          Range
          <select value={choosing ? 'custom' : (params.interval ?? 'custom')} onChange={(e) => onInterval(e.currentTarget.value)}>
            {INTERVALS.map((i) => (
              <option key={i.value} value={i.value}>
                {i.label}
              </option>
            ))}
            <option value="custom">Custom dates…</option>
          </select>
        </label>
        <label>
          Time zone
          <select value={params.timezone} onChange={(e) => onChange({ timezone: e.currentTarget.value })}>
            <option value="">Workspace default{answeredZone && !params.timezone ? ` (${answeredZone})` : ''}</option>
            {zones.includes(here) && <option value={here}>{here} (this browser)</option>}
            {/* A zone from a shared URL under another of its names (Asia/Kolkata, listed as Asia/Calcutta). */}
            {params.timezone && !zones.includes(params.timezone) && <option value={params.timezone}>{params.timezone}</option>}
            {zones.map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </label>
        <fieldset class="bots-toggle">
          <legend>Traffic</legend>
          {BOTS.map((b) => (
            <label key={b.value}>
              <input type="radio" name="bots" value={b.value} checked={params.bots === b.value} onChange={() => onChange({ bots: b.value })} />
              {b.label}
            </label>
          ))}
        </fieldset>
      </div>
      {choosing && (
        <form
          class="custom-range"
          onSubmit={(e) => {
            e.preventDefault();
            if (from && to && !invalid) onChange({ interval: null, from, to });
          }}
        >
          <label>
            From
            <input type="date" value={from} required onInput={(e) => setFrom(e.currentTarget.value)} aria-invalid={invalid ? 'true' : undefined} aria-describedby={invalid ? 'range-error' : undefined} />
          </label>
          <label>
            To (included)
            <input type="date" value={to} required onInput={(e) => setTo(e.currentTarget.value)} aria-invalid={invalid ? 'true' : undefined} aria-describedby={invalid ? 'range-error' : undefined} />
          </label>
          <button type="submit" disabled={!from || !to || invalid}>
            Apply dates
          </button>
          {invalid && (
            <small id="range-error" class="field-error" role="alert">
              The first day must not come after the last.
            </small>
          )}
        </form>
      )}
    </div>
  );
}
