/** Placeholder until the page lands (issue 4). */
export function AdminAgentsPage() {
  return (
    <div className="page">
      <h1 className="page-title">节点管理</h1>
    </div>
  );
}
