/**
 * What a browser downloads on a first visit to one route of the SPA (issue 18 §1): a fresh
 * Chromium context (empty cache), the page loaded from a real server, every JavaScript and CSS
 * response of the server counted at its transferred size (the server sends them gzip-compressed),
 * until the page is ready and the network has gone quiet. Shared by `bun run bench:web`
 * (scripts/bench/web.ts) and tests/e2e/first-page.test.ts.
 */
import type { Browser, Page } from "playwright-core";
import { newPage, recordCspViolations } from "./chromium.ts";

export interface Download {
  /** Path on the server, e.g. `/app.js`, `/chunks/Shop-AB12CD34.js`. */
  path: string;
  /** Body bytes as transferred (gzip). */
  gzipBytes: number;
}

export interface FirstVisit {
  downloads: Download[];
  jsGzipBytes: number;
  cssGzipBytes: number;
  /** Console errors, uncaught errors, CSP violations and HTTP errors seen during the visit. */
  problems: string[];
}

export interface VisitOptions {
  /** Session cookies to start with (name → value), e.g. an ApiClient's jar. */
  cookies?: Map<string, string>;
  /** Resolves once the route's own content is on screen. */
  ready: (page: Page) => Promise<void>;
}

function watchProblems(page: Page, problems: string[]) {
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`http ${response.status()}: ${response.url()}`);
  });
}

export async function firstVisit(
  browser: Browser,
  baseUrl: string,
  hashPath: string,
  options: VisitOptions,
): Promise<FirstVisit> {
  const { context, page } = await newPage(browser, 1280);
  try {
    const problems: string[] = [];
    watchProblems(page, problems);
    await recordCspViolations(page, problems);
    if (options.cookies?.size) {
      await context.addCookies([...options.cookies].map(([name, value]) => ({ name, value, url: baseUrl })));
    }
    const pending: Promise<Download | undefined>[] = [];
    page.on("requestfinished", (request) => {
      const url = new URL(request.url());
      if (url.origin !== new URL(baseUrl).origin || !/\.(js|css)$/.test(url.pathname)) return;
      pending.push(
        request.sizes().then((sizes) => ({ path: url.pathname, gzipBytes: sizes.responseBodySize })),
      );
    });
    await page.goto(`${baseUrl}/#${hashPath}`);
    await options.ready(page);
    // Chunks a page imports after its first render (e.g. a lazily loaded part) count too.
    await page.waitForLoadState("networkidle");
    const downloads = (await Promise.all(pending)).filter((d): d is Download => d !== undefined);
    const sum = (ext: string) =>
      downloads.filter((d) => d.path.endsWith(ext)).reduce((total, d) => total + d.gzipBytes, 0);
    return { downloads, jsGzipBytes: sum(".js"), cssGzipBytes: sum(".css"), problems };
  } finally {
    await context.close();
  }
}
