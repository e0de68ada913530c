/** What every view of the page provides; views/index.ts lists them. */
import type { Ga4ghClient } from '../../../client/index.js';

export interface ViewContext {
  client: Ga4ghClient;
  /** The areas this server serves (GET /info). */
  areas: string[];
  /** Says something in the page's live status line. */
  status(text: string): void;
}

export interface View {
  /** The view's address: `#/<id>`. */
  id: string;
  title: string;
  /** Shown only when the server serves this area (undefined: always). */
  area?: string;
  render(root: HTMLElement, context: ViewContext): Promise<void>;
}
