/**
 * The page styles (web/pages.css, built to /pages.css): added to the document with the first page
 * fetched on its first visit, which waits for them, so no page shows unstyled and the first visit
 * to /#/login does not download them (issue 31).
 */
let loaded: Promise<void> | undefined;

function addPageStyles(): Promise<void> {
  return new Promise((resolve) => {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = "/pages.css";
    // A failed stylesheet leaves the page usable, if plain: it is shown all the same.
    link.onload = () => resolve();
    link.onerror = () => resolve();
    document.head.appendChild(link);
  });
}

/** What `load` answers, once the page styles are in the document too. */
export async function withPageStyles<T>(load: Promise<T>): Promise<T> {
  loaded ??= addPageStyles();
  const [value] = await Promise.all([load, loaded]);
  return value;
}
