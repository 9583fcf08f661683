/** Placeholder registered in App.tsx; replaced by the page itself in this issue. */
export function AdminTradeListPage() {
  return <div className="page" />;
}
