/** Placeholder until the page lands (issue 4). */
export function AgentsPage() {
  return (
    <div className="page">
      <h1 className="page-title">节点列表</h1>
    </div>
  );
}
