/** Placeholder registered in App.tsx; replaced by the page itself in this issue. */
export function OrderInfoPage() {
  return <div className="page" />;
}
