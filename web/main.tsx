import "./styles.css";
import { createRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { loadHostInfo, refreshUserInfo } from "./session.ts";
import { applyStartupParams } from "./startup.ts";

if (applyStartupParams()) {
  const root = document.getElementById("root");
  if (root) createRoot(root).render(<App />);
  // The session cookie is HttpOnly: whether we are logged in is whatever userinfo says.
  void refreshUserInfo({ quiet: true });
  void loadHostInfo();
}
