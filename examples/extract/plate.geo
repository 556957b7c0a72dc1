// A square plate with two circular holes, meshed with triangles (gmsh's built-in kernel).
//   gmsh -2 plate.geo -o plate.msh        (Debian gmsh 4.8 writes MSH 4.1 ASCII)
// The mesh size h = 0.0045 gives about 55,000 vertices (docs/WORKLOADS.md has the measured count);
// `commfit extract mesh plate.msh --parts K` turns it into a halo-exchange matrix.
h = 0.0045;
Point(1) = {0, 0, 0, h};
Point(2) = {1, 0, 0, h};
Point(3) = {1, 1, 0, h};
Point(4) = {0, 1, 0, h};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
// Hole A: centre (0.3, 0.6), radius 0.12; hole B: centre (0.7, 0.3), radius 0.08.
Point(10) = {0.3, 0.6, 0, h};
Point(11) = {0.42, 0.6, 0, h};
Point(12) = {0.3, 0.72, 0, h};
Point(13) = {0.18, 0.6, 0, h};
Point(14) = {0.3, 0.48, 0, h};
Circle(11) = {11, 10, 12};
Circle(12) = {12, 10, 13};
Circle(13) = {13, 10, 14};
Circle(14) = {14, 10, 11};
Curve Loop(2) = {11, 12, 13, 14};
Point(20) = {0.7, 0.3, 0, h};
Point(21) = {0.78, 0.3, 0, h};
Point(22) = {0.7, 0.38, 0, h};
Point(23) = {0.62, 0.3, 0, h};
Point(24) = {0.7, 0.22, 0, h};
Circle(21) = {21, 20, 22};
Circle(22) = {22, 20, 23};
Circle(23) = {23, 20, 24};
Circle(24) = {24, 20, 21};
Curve Loop(3) = {21, 22, 23, 24};
Plane Surface(1) = {1, 2, 3};
Physical Surface("plate") = {1};
Physical Curve("outer") = {1, 2, 3, 4};
