/** The web page's script: the menu of views and the view named by the address (`#/variants`). */
import { Ga4ghClient } from '../../client/index.js';
import { errorText, h, labelled } from './dom.js';
import { views } from './views/index.js';
import type { ViewContext } from './views/view.js';

// The API lives beside the page: its base is the page's own folder (works under a prefix or a proxy path).
const base = new URL('.', location.href).href.replace(/\/$/, '');
// An access token (or API key) pasted by the reader: kept for this tab only, sent with every request.
const TOKEN_KEY = 'ga4gh-access-token';
const token = sessionStorage.getItem(TOKEN_KEY) ?? undefined;
const client = new Ga4ghClient(base, { retries: 2, headers: token ? { authorization: `Bearer ${token}` } : undefined });
const nav = document.getElementById('nav')!;
const main = document.getElementById('view')!;
const statusLine = document.getElementById('status')!;

/** The token box: paste a token to see what it may see, or forget it; either reloads the page under the new caller. */
function tokenBox(): HTMLElement {
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', placeholder: token ? 'a token is in use' : 'access token or API key' });
  const use = (event: Event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    sessionStorage.setItem(TOKEN_KEY, text);
    location.reload();
  };
  const forget = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  };
  return h(
    'form',
    { id: 'token-form', onsubmit: use },
    labelled('Access token (kept in this tab only)', input),
    h('button', { type: 'submit' }, 'Use'),
    token ? h('button', { type: 'button', onclick: forget }, 'Forget') : null,
  );
}

/** What the caller may see: the datasets whose records they may read. */
async function callerLine(): Promise<string> {
  const datasets = await client.searchDatasets({ pageSize: 1000 }).all(1000);
  const names = datasets.map((d) => d.name ?? d.id).join(', ') || 'none';
  return `${token ? 'With your token' : 'Without a token'} you may read the records of ${datasets.length} dataset${datasets.length === 1 ? '' : 's'}: ${names}`;
}

async function start() {
  // The box first: a refused token fails every request, and the box is where it is forgotten.
  const access = document.getElementById('access')!;
  access.replaceChildren(tokenBox());
  access.append(h('p', { id: 'caller', class: 'muted' }, await callerLine()));
  const info = await client.getInfo();
  const areas = (info.attributes?.attr?.areas?.values ?? []).map((v) => String(v.stringValue));
  const available = views.filter((v) => !v.area || areas.includes(v.area));
  const context: ViewContext = { client, areas, status: (text) => (statusLine.textContent = text) };
  nav.replaceChildren(...available.map((v) => h('li', {}, h('a', { href: `#/${v.id}`, 'data-view': v.id }, v.title))));

  let rendering = 0;
  const show = async () => {
    const id = location.hash.replace(/^#\/?/, '') || available[0].id;
    const view = available.find((v) => v.id === id) ?? available[0];
    for (const link of nav.querySelectorAll('a')) {
      if (link.dataset.view === view.id) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${view.title} · GA4GH data browser`;
    const mine = ++rendering;
    const root = h('div');
    main.replaceChildren(root);
    context.status(`Loading ${view.title}…`);
    try {
      await view.render(root, context);
      if (mine === rendering) context.status(`${view.title} loaded`);
    } catch (e) {
      root.append(errorText(e));
      context.status(`${view.title} failed`);
    }
    main.focus();
  };
  window.addEventListener('hashchange', () => void show());
  await show();
}

start().catch((e) => main.replaceChildren(errorText(e)));
