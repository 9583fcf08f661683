/** Placeholder until the page lands (issue 4). */
export function AdminAgentLinesPage() {
  return (
    <div className="page">
      <h1 className="page-title">线路管理</h1>
    </div>
  );
}
