import { useEffect, useState } from 'preact/hooks';

/** Whether a media query matches now, following its changes (a phone turned sideways, a window resized). */
export function useMedia(query: string): boolean {
  const [matches, setMatches] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const list = matchMedia(query);
    const update = () => setMatches(list.matches);
    update();
    list.addEventListener('change', update);
    return () => list.removeEventListener('change', update);
  }, [query]);
  return matches;
}

/** The width under which screens lay out for a phone (cards instead of tables). */
export const PHONE = '(max-width: 40rem)';
