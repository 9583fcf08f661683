/** Placeholder registered in App.tsx; replaced by the page itself in this issue. */
export function AdminCombosPage() {
  return <div className="page" />;
}
