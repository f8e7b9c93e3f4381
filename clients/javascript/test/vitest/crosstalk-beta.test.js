import { crosstalkTests } from "./crosstalk.js";

crosstalkTests("beta");
