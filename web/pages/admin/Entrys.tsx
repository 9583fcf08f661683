/** Placeholder until the page lands (issue 4). */
export function AdminEntrysPage() {
  return (
    <div className="page">
      <h1 className="page-title">入口管理</h1>
    </div>
  );
}
