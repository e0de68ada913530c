/** The web page's script: the menu of views and the view named by the address (`#/variants`). */
import { Ga4ghClient } from '../../client/index.js';
import { errorText, h } from './dom.js';
import { views } from './views/index.js';
import type { ViewContext } from './views/view.js';

// The API lives beside the page: its base is the page's own folder (works under a prefix or a proxy path).
const base = new URL('.', location.href).href.replace(/\/$/, '');
const client = new Ga4ghClient(base, { retries: 2 });
const nav = document.getElementById('nav')!;
const main = document.getElementById('view')!;
const statusLine = document.getElementById('status')!;

async function start() {
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
