import type { Renderer } from "../model.ts";

export const renderLoon: Renderer = () => {
  throw new Error("not rendered yet");
};
