import type { Renderer } from "../model.ts";

export const renderQx: Renderer = () => {
  throw new Error("not rendered yet");
};
