// Every view of the page, in tab order (each registers itself: registry.ts).
import './overview';
import './heatmap';
import './steptrace';
import './timeline';
import './matrix';
import './functions';
import './telemetry';
import './hang';
import './compare';
