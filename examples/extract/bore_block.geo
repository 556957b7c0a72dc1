// A unit cube with a cylindrical bore through it and a spherical cavity near a corner, meshed with
// tetrahedra (gmsh's OpenCASCADE kernel):
//   gmsh -3 bore_block.geo -o bore_block.msh        (Debian gmsh 4.8 writes MSH 4.1 ASCII)
// The largest element size 0.015 gives a mesh of about 200,000 vertices (docs/PERFORMANCE.md,
// "Halos of real meshes", has the measured count); `commfit extract bore_block.msh --parts K`
// turns it into the halo exchange of an SpMV on it. bench/smpi/mesh_halos.sh meshes it.
SetFactory("OpenCASCADE");
Box(1) = {0, 0, 0, 1, 1, 1};
Cylinder(2) = {0.5, 0.5, -0.1, 0, 0, 1.2, 0.2};
Sphere(3) = {0.2, 0.2, 0.78, 0.12};
BooleanDifference{ Volume{1}; Delete; }{ Volume{2, 3}; Delete; }
Mesh.CharacteristicLengthMax = 0.015;
