import { type ComponentType, type JSX, lazy, useState } from "react";
import { withPageStyles } from "./pageStyles.ts";

export interface LazyPage {
  (): JSX.Element;
  /** Fetches the page (and the page styles) ahead of its first visit. */
  preload(): Promise<unknown>;
}

interface PageEntry {
  /** The page itself, once fetched. */
  loaded?: ComponentType;
  /** The page behind React.lazy (suspends until fetched). */
  Lazy: ComponentType;
}

/** Chosen once per mount, so a page never swaps from the lazy wrapper to itself (losing state). */
function LoadedOrLazy({ entry }: { entry: PageEntry }) {
  const [Component] = useState(() => entry.loaded ?? entry.Lazy);
  return <Component />;
}

/**
 * A page fetched as its own chunk on its first visit, with the page styles (the spinner meanwhile,
 * from the Suspense in App.tsx's Page), so the first download (`/#/login`) carries only the shell
 * and the login page (issues 18 and 31; `bun run bench:web`). A page already fetched (preloaded,
 * or seen before) is shown at once, without the spinner.
 */
export function lazyPage(load: () => Promise<ComponentType>): LazyPage {
  const entry: PageEntry = { Lazy: lazy(() => preload()) };
  let loading: Promise<{ default: ComponentType }> | undefined;
  const preload = () => {
    loading ??= withPageStyles(load()).then((Component) => {
      entry.loaded = Component;
      return { default: Component };
    });
    return loading;
  };
  return Object.assign(() => <LoadedOrLazy entry={entry} />, { preload });
}

let dashboardPreload: () => Promise<unknown> = async () => {};

/** App.tsx names the dashboard's page here, for the pages that lead to it. */
export function setDashboardPreload(preload: () => Promise<unknown>) {
  dashboardPreload = preload;
}

/**
 * Fetches the dashboard (where login and sign-up lead) while the visitor is still on the form, so
 * it shows at once afterwards.
 */
export function preloadDashboard() {
  void dashboardPreload();
}
