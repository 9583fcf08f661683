/** A row of mutually exclusive filter buttons (订单记录, 问题反馈), announced as a group. */
export function Segmented<K extends string>({
  legend,
  items,
  value,
  onChange,
}: {
  legend: string;
  items: readonly { key: K; label: string }[];
  value: K;
  onChange: (key: K) => void;
}) {
  return (
    <fieldset className="segmented">
      <legend className="visually-hidden">{legend}</legend>
      {items.map((item) => (
        <button
          key={item.key}
          type="button"
          className={`segment${value === item.key ? " segment-on" : ""}`}
          aria-pressed={value === item.key}
          onClick={() => onChange(item.key)}
        >
          {item.label}
        </button>
      ))}
    </fieldset>
  );
}
