import { render } from 'preact';
import '@picocss/pico/css/pico.min.css';
import './styles.css';
import { App } from './app.tsx';

// How the person last acted: the focus ring on headings a screen focuses is shown to keyboard users only
// (styles.css). Browsers' own :focus-visible guess shows it after a click too when script moves the focus.
const root = document.documentElement;
addEventListener('pointerdown', () => (root.dataset.input = 'pointer'), { capture: true, passive: true });
addEventListener('keydown', () => (root.dataset.input = 'keyboard'), { capture: true, passive: true });

render(<App />, document.getElementById('app')!);
