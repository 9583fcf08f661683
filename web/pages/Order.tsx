/** Placeholder registered in App.tsx; replaced by the page itself in this issue. */
export function OrderPage() {
  return <div className="page" />;
}
