import { useId } from 'preact/hooks';

const number = new Intl.NumberFormat();

/** One limit of the plan and how much of it is used: a native <progress> (announced as a value) with the figures in words. */
export function UsageBar({ label, used, limit }: { label: string; used: number; limit: number }) {
  const id = useId();
  const percent = limit > 0 ? Math.min(100, Math.round((used / limit) * 100)) : 0;
  return (
    <div class="usage">
      <label for={id}>
        {label}: <strong>{number.format(used)}</strong> of {number.format(limit)} ({percent} %)
      </label>
      <progress id={id} class="usage-bar" max={Math.max(limit, 1)} value={Math.min(used, Math.max(limit, 1))} data-level={percent >= 100 ? 'full' : percent >= 80 ? 'high' : 'ok'}>
        {percent} %
      </progress>
    </div>
  );
}
