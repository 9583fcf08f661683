import type { Renderer } from "../model.ts";

export const renderSingbox: Renderer = () => {
  throw new Error("not rendered yet");
};
