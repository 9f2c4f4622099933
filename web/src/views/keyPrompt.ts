/**
 * Asks for an API key when the API answers 401: a modal dialog with one field (data-api-key). The key is
 * kept for the browser session and sent in a header, never in a URL.
 */
import { h } from '../dom.js';

/** Shows the dialog; resolves with the key entered. `problem` says why it is asked again. */
export function askForKey(problem: string | undefined): Promise<string> {
  return new Promise((resolve) => {
    const input = h('input', {
      id: 'api-key',
      type: 'password',
      'data-api-key': '',
      autocomplete: 'off',
      spellcheck: 'false',
      required: true,
      placeholder: 'fcd_…',
      'aria-describedby': 'api-key-help',
    });
    const form = h(
      'form',
      { class: 'key-form' },
      h('h2', {}, 'API key needed'),
      h('p', { id: 'api-key-help' }, 'This server requires an API key. It is kept for this browser tab only and sent in the Authorization header.'),
      problem === undefined ? null : h('p', { class: 'error', role: 'alert' }, problem),
      h('label', { for: 'api-key' }, 'API key'),
      input,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Use this key')),
    );
    const dialog = h('dialog', { class: 'key-dialog', 'aria-labelledby': 'key-title' }, form);
    form.querySelector('h2')!.id = 'key-title';
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const key = input.value.trim();
      if (key === '') return;
      dialog.close();
      dialog.remove();
      resolve(key);
    });
    // Without a key nothing can be shown: Escape does not dismiss it.
    dialog.addEventListener('cancel', (e) => e.preventDefault());
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
}
